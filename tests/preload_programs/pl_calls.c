/* Every interposed call once or a known number of times, with the results and
 * errno checked against what the C library must return. Prints key=value lines
 * with the expected counts; exit status 0 when every behaviour was right. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int failures = 0;
#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "pl_calls: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

enum { kLocks = 1000 };

pthread_mutex_t static_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_rwlock_t static_rwlock = PTHREAD_RWLOCK_INITIALIZER;
pthread_mutex_t work_mutex;
pthread_cond_t work_cond;
int work_ready = 0;

/* Named functions: their names become class names (init site) and SOURCE. */
__attribute__((noinline)) void pl_init_work_mutex(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  CHECK(pthread_mutex_init(&work_mutex, &attr) == 0);
  pthread_mutexattr_destroy(&attr);
}

__attribute__((noinline)) void pl_lock_work_mutex(int n) {
  for (int i = 0; i < n; ++i) {
    CHECK(pthread_mutex_lock(&work_mutex) == 0);
    CHECK(pthread_mutex_unlock(&work_mutex) == 0);
  }
}

static void* signaller(void* arg) {
  (void)arg;
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
  pthread_mutex_lock(&work_mutex);
  work_ready = 1;
  pthread_cond_signal(&work_cond);
  pthread_mutex_unlock(&work_mutex);
  return NULL;
}

/* Set by the contender right before it locks: main holds the lock 30 ms from
   then, so the contender waits even when a loaded machine starts it late. */
static atomic_int g_contender_started;

static void* contender(void* arg) {
  pthread_mutex_t* m = arg;
  atomic_store(&g_contender_started, 1);
  CHECK(pthread_mutex_lock(m) == 0); /* blocks: main holds it for 30 ms */
  CHECK(pthread_mutex_unlock(m) == 0);
  return NULL;
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : "/tmp";

  /* errno survives lock calls */
  errno = 4242;
  pthread_mutex_lock(&static_mutex);
  CHECK(errno == 4242);
  pthread_mutex_unlock(&static_mutex);
  CHECK(errno == 4242);
  for (int i = 1; i < kLocks; ++i) {
    pthread_mutex_lock(&static_mutex);
    pthread_mutex_unlock(&static_mutex);
  }
  printf("static_mutex_locks=%d\n", kLocks);

  pl_init_work_mutex();
  pl_lock_work_mutex(kLocks);

  /* trylock: EBUSY on a held mutex */
  CHECK(pthread_mutex_lock(&work_mutex) == 0);
  CHECK(pthread_mutex_trylock(&work_mutex) == EBUSY);
  CHECK(pthread_mutex_unlock(&work_mutex) == 0);
  CHECK(pthread_mutex_trylock(&work_mutex) == 0);
  CHECK(pthread_mutex_unlock(&work_mutex) == 0);
  struct timespec abst;
  clock_gettime(CLOCK_REALTIME, &abst);
  abst.tv_sec += 5;
  CHECK(pthread_mutex_timedlock(&work_mutex, &abst) == 0);
  CHECK(pthread_mutex_unlock(&work_mutex) == 0);
  printf("work_mutex_locks_min=%d\n", kLocks + 4); /* + lock, trylock x2, timedlock; a few more below */

  /* a contended lock: a timed wait (TIMER_WAIT > 0) */
  pthread_mutex_t contended = PTHREAD_MUTEX_INITIALIZER;
  pthread_t ct;
  CHECK(pthread_mutex_lock(&contended) == 0);
  pthread_create(&ct, NULL, contender, &contended);
  while (!atomic_load(&g_contender_started)) sched_yield();
  struct timespec hold = {0, 30 * 1000 * 1000};
  nanosleep(&hold, NULL);
  CHECK(pthread_mutex_unlock(&contended) == 0);
  pthread_join(ct, NULL);

  /* error-checking mutex: EDEADLK on a relock, EPERM on a foreign unlock */
  pthread_mutexattr_t ea;
  pthread_mutexattr_init(&ea);
  pthread_mutexattr_settype(&ea, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_t em;
  CHECK(pthread_mutex_init(&em, &ea) == 0);
  CHECK(pthread_mutex_unlock(&em) == EPERM);
  CHECK(pthread_mutex_lock(&em) == 0);
  CHECK(pthread_mutex_lock(&em) == EDEADLK);
  CHECK(pthread_mutex_unlock(&em) == 0);
  CHECK(pthread_mutex_destroy(&em) == 0);
  /* recursive mutex */
  pthread_mutexattr_settype(&ea, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_t rm;
  CHECK(pthread_mutex_init(&rm, &ea) == 0);
  CHECK(pthread_mutex_lock(&rm) == 0);
  CHECK(pthread_mutex_lock(&rm) == 0);
  CHECK(pthread_mutex_trylock(&rm) == 0);
  CHECK(pthread_mutex_unlock(&rm) == 0);
  CHECK(pthread_mutex_unlock(&rm) == 0);
  CHECK(pthread_mutex_unlock(&rm) == 0);
  CHECK(pthread_mutex_destroy(&rm) == 0);
  pthread_mutexattr_destroy(&ea);

  /* rwlocks */
  pthread_rwlock_t rw;
  CHECK(pthread_rwlock_init(&rw, NULL) == 0);
  CHECK(pthread_rwlock_rdlock(&rw) == 0);
  CHECK(pthread_rwlock_tryrdlock(&rw) == 0);
  CHECK(pthread_rwlock_trywrlock(&rw) == EBUSY);
  CHECK(pthread_rwlock_unlock(&rw) == 0);
  CHECK(pthread_rwlock_unlock(&rw) == 0);
  CHECK(pthread_rwlock_wrlock(&rw) == 0);
  CHECK(pthread_rwlock_rdlock(&rw) == EDEADLK);
  CHECK(pthread_rwlock_unlock(&rw) == 0);
  CHECK(pthread_rwlock_timedrdlock(&rw, &abst) == 0);
  CHECK(pthread_rwlock_unlock(&rw) == 0);
  CHECK(pthread_rwlock_timedwrlock(&rw, &abst) == 0);
  CHECK(pthread_rwlock_unlock(&rw) == 0);
  CHECK(pthread_rwlock_destroy(&rw) == 0);
  CHECK(pthread_rwlock_wrlock(&static_rwlock) == 0);
  CHECK(pthread_rwlock_unlock(&static_rwlock) == 0);
  printf("rwlock_ops=8\n");

  /* conditions: a wait that a second thread ends, a timed wait that times out */
  CHECK(pthread_cond_init(&work_cond, NULL) == 0);
  pthread_t st;
  pthread_create(&st, NULL, signaller, NULL);
  pthread_mutex_lock(&work_mutex);
  while (!work_ready) CHECK(pthread_cond_wait(&work_cond, &work_mutex) == 0);
  pthread_mutex_unlock(&work_mutex);
  pthread_join(st, NULL);
  pthread_mutex_lock(&work_mutex);
  clock_gettime(CLOCK_REALTIME, &abst);
  abst.tv_nsec += 10 * 1000 * 1000;
  if (abst.tv_nsec >= 1000000000L) {
    abst.tv_sec += 1;
    abst.tv_nsec -= 1000000000L;
  }
  errno = 77;
  CHECK(pthread_cond_timedwait(&work_cond, &work_mutex, &abst) == ETIMEDOUT);
  CHECK(errno == 77);
  pthread_mutex_unlock(&work_mutex);
  CHECK(pthread_cond_broadcast(&work_cond) == 0);
  CHECK(pthread_cond_destroy(&work_cond) == 0);
  CHECK(pthread_mutex_destroy(&work_mutex) == 0);

  /* files */
  char path[512], path2[512];
  snprintf(path, sizeof(path), "%s/pl_calls_%d.dat", dir, (int)getpid());
  snprintf(path2, sizeof(path2), "%s/pl_calls_%d.renamed", dir, (int)getpid());
  char buf[4096];
  memset(buf, 'x', sizeof(buf));
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK(write(fd, buf, 1000) == 1000);
  CHECK(pwrite(fd, buf, 500, 1000) == 500);
  struct iovec iov[2] = {{buf, 100}, {buf + 100, 200}};
  CHECK(lseek(fd, 0, SEEK_END) == 1500);
  CHECK(writev(fd, iov, 2) == 300);
  CHECK(fsync(fd) == 0);
  CHECK(fdatasync(fd) == 0);
  CHECK(lseek(fd, 0, SEEK_SET) == 0);
  CHECK(read(fd, buf, 700) == 700);
  CHECK(pread(fd, buf, 800, 1000) == 800); /* file is 1800 bytes: 800 from 1000 */
  CHECK(lseek(fd, 0, SEEK_SET) == 0);
  CHECK(readv(fd, iov, 2) == 300);
  CHECK(close(fd) == 0);
  printf("file_write_bytes=%d\nfile_read_bytes=%d\nfile_writes=3\nfile_reads=3\n", 1000 + 500 + 300,
         700 + 800 + 300);
  CHECK(rename(path, path2) == 0);
  fd = open(path2, O_RDONLY);
  CHECK(fd >= 0);
  CHECK(read(fd, buf, sizeof(buf)) == 1800);
  CHECK(read(fd, buf, sizeof(buf)) == 0);
  CHECK(close(fd) == 0);
  fd = creat(path, 0644);
  CHECK(fd >= 0);
  CHECK(close(fd) == 0);
  CHECK(unlink(path) == 0);
  printf("renamed_file=%s\n", path2);

  /* errors and errno as the C library sets them */
  errno = 0;
  CHECK(open("/nonexistent/pl_calls", O_RDONLY) == -1 && errno == ENOENT);
  errno = 0;
  CHECK(read(-1, buf, 1) == -1 && errno == EBADF);
  errno = 0;
  CHECK(close(-1) == -1 && errno == EBADF);
  errno = 0;
  CHECK(unlink("/nonexistent/pl_calls") == -1 && errno == ENOENT);
  errno = 0;
  CHECK(write(1000000, buf, 1) == -1 && errno == EBADF);
  CHECK(unlink(path2) == 0);

  /* stdio still works (its fds are not opened through open) */
  FILE* f = fopen("/proc/self/status", "r");
  CHECK(f != NULL);
  if (f) fclose(f);

  printf("failures=%d\n", failures);
  return failures == 0 ? 0 : 1;
}

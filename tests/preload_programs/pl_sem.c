/* POSIX semaphores of known counts, and their behaviour as the C library's:
 * kThreads threads each take the unnamed semaphore `lock` kWaits times (sem_wait,
 * sem_post); main tries it twice (taken, then EAGAIN), and times out on it once
 * with sem_timedwait (ETIMEDOUT) and once with sem_clockwait (EINVAL: a bad
 * nanosecond field). On `gate` (value 0): one sem_wait interrupted by a signal
 * (EINTR), one cancelled while it blocks, and one thread with a cancel pending
 * whose sem_wait on a free semaphore must not take it (a cancellation point even
 * when it would not block). A named semaphore is posted and taken kNamed times.
 * Prints sem_waits=, try_waits=, timed_waits=, gate_waits=, named_waits=,
 * named_class=, failures=. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kThreads = 2, kWaits = 1000, kNamed = 7 };

static int failures = 0;
#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "pl_sem: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);                \
    }                                                                    \
  } while (0)

static sem_t lock, gate, free_sem;
static long counter = 0;
static volatile sig_atomic_t interrupted_done = 0;

/* Not tail calls (results checked): the init call sites are in these functions. */
__attribute__((noinline)) void pl_sem_init_lock(void) { CHECK(sem_init(&lock, 0, 1) == 0); }
__attribute__((noinline)) void pl_sem_init_gate(void) {
  CHECK(sem_init(&gate, 0, 0) == 0);
  CHECK(sem_init(&free_sem, 0, 1) == 0);
}

static void* worker(void* arg) {
  (void)arg;
  for (int i = 0; i < kWaits; ++i) {
    CHECK(sem_wait(&lock) == 0);
    ++counter;
    CHECK(sem_post(&lock) == 0);
  }
  return NULL;
}

static void on_signal(int sig) { (void)sig; }

static void* interrupted(void* arg) {
  (void)arg;
  errno = 0;
  const int rc = sem_wait(&gate);
  CHECK(rc == -1 && errno == EINTR);
  interrupted_done = 1;
  return NULL;
}

static void* cancelled_blocked(void* arg) {
  (void)arg;
  sem_wait(&gate);
  CHECK(!"sem_wait returned after pthread_cancel");
  return NULL;
}

static void* cancelled_free(void* arg) {
  (void)arg;
  int old;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  pthread_cancel(pthread_self());
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
  sem_wait(&free_sem);
  CHECK(!"sem_wait did not act on a pending cancel");
  return NULL;
}

int main(void) {
  pl_sem_init_lock();
  pl_sem_init_gate();

  pthread_t t[kThreads];
  for (int i = 0; i < kThreads; ++i) CHECK(pthread_create(&t[i], NULL, worker, NULL) == 0);
  for (int i = 0; i < kThreads; ++i) pthread_join(t[i], NULL);
  CHECK(counter == (long)kThreads * kWaits);

  CHECK(sem_trywait(&lock) == 0);
  errno = 0;
  CHECK(sem_trywait(&lock) == -1 && errno == EAGAIN);
  struct timespec past;
  clock_gettime(CLOCK_REALTIME, &past);
  errno = 0;
  CHECK(sem_timedwait(&lock, &past) == -1 && errno == ETIMEDOUT);
  struct timespec bad = {0, 2000000000L};
  errno = 0;
  CHECK(sem_clockwait(&lock, CLOCK_MONOTONIC, &bad) == -1 && errno == EINVAL);
  CHECK(sem_post(&lock) == 0);

  /* EINTR passes through: a handler without SA_RESTART, signals until the wait ends. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGUSR1, &sa, NULL);
  pthread_t w;
  CHECK(pthread_create(&w, NULL, interrupted, NULL) == 0);
  while (!interrupted_done) {
    usleep(20000);
    pthread_kill(w, SIGUSR1);
  }
  pthread_join(w, NULL);

  void* result = NULL;
  CHECK(pthread_create(&w, NULL, cancelled_blocked, NULL) == 0);
  usleep(50000);
  pthread_cancel(w);
  pthread_join(w, &result);
  CHECK(result == PTHREAD_CANCELED);
  CHECK(pthread_create(&w, NULL, cancelled_free, NULL) == 0);
  pthread_join(w, &result);
  CHECK(result == PTHREAD_CANCELED);
  int value = -1;
  CHECK(sem_getvalue(&free_sem, &value) == 0 && value == 1);

  char name[64];
  snprintf(name, sizeof name, "/pl_sem_named_%d", (int)getpid());
  sem_t* named = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
  CHECK(named != SEM_FAILED);
  if (named != SEM_FAILED) {
    for (int i = 0; i < kNamed; ++i) {
      CHECK(sem_post(named) == 0);
      CHECK(sem_wait(named) == 0);
    }
    CHECK(sem_close(named) == 0);
    sem_unlink(name);
  }
  CHECK(sem_destroy(&free_sem) == 0);

  printf(
      "sem_waits=%ld\ntry_waits=2\ntimed_waits=2\ngate_waits=1\nnamed_waits=%d\nnamed_class=%s\nfailures=%"
      "d\n",
      (long)kThreads * kWaits, kNamed, name + 1, failures);
  return failures == 0 ? 0 : 1;
}

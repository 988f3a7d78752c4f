/* Many short-lived threads, in waves: each locks a shared mutex a few times and
 * writes to a file. Usage: pl_many_threads <dir> [threads] [wave]. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { kLocksPerThread = 10 };

static pthread_mutex_t shared;
static int fd = -1;
static long total = 0;

__attribute__((noinline)) void pl_many_init(void) {
  if (pthread_mutex_init(&shared, NULL) != 0) abort(); /* not a tail call: the caller is this function */
}

static void* worker(void* arg) {
  (void)arg;
  for (int i = 0; i < kLocksPerThread; ++i) {
    pthread_mutex_lock(&shared);
    ++total;
    pthread_mutex_unlock(&shared);
  }
  if (write(fd, "0123456789abcdef", 16) != 16) abort();
  return NULL;
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : "/tmp";
  const int threads = argc > 2 ? atoi(argv[2]) : 2000;
  const int wave = argc > 3 ? atoi(argv[3]) : 16;
  /* A daemon's start-up: close every descriptor it did not open (the
   * interposer's region descriptor must survive it). */
  for (int d = 3; d < 1024; ++d) close(d);
  char path[512];
  snprintf(path, sizeof(path), "%s/pl_many_%d.dat", dir, (int)getpid());
  fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) return 2;
  pl_many_init();
  pthread_t* ids = calloc((size_t)wave, sizeof(pthread_t));
  for (int done = 0; done < threads; done += wave) {
    int n = threads - done < wave ? threads - done : wave;
    for (int i = 0; i < n; ++i) pthread_create(&ids[i], NULL, worker, NULL);
    for (int i = 0; i < n; ++i) pthread_join(ids[i], NULL);
  }
  close(fd);
  unlink(path);
  printf("locks=%ld\nthreads=%d\nbytes=%d\nfile=%s\n", total, threads, threads * 16, path);
  free(ids);
  return total == (long)threads * kLocksPerThread ? 0 : 1;
}

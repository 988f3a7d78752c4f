/* A shared library whose constructor locks mutexes and writes a file while the
 * program loads: it may run before the interposer's own constructor. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t early_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t early_init_mutex;
static pthread_cond_t early_cond;
int pl_early_locks = 0;

__attribute__((constructor)) static void pl_early_start(void) {
  pthread_mutex_init(&early_init_mutex, NULL);
  pthread_cond_init(&early_cond, NULL);
  for (int i = 0; i < 10; ++i) {
    pthread_mutex_lock(&early_mutex);
    ++pl_early_locks;
    pthread_mutex_unlock(&early_mutex);
    pthread_mutex_lock(&early_init_mutex);
    pthread_cond_signal(&early_cond);
    pthread_mutex_unlock(&early_init_mutex);
  }
  char path[64];
  snprintf(path, sizeof(path), "/tmp/pl_early_%d", (int)getpid());
  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd >= 0) {
    if (write(fd, "early\n", 6) != 6) abort();
    close(fd);
  }
  unlink(path);
}

void pl_early_lock(void) {
  pthread_mutex_lock(&early_mutex);
  ++pl_early_locks;
  pthread_mutex_unlock(&early_mutex);
}

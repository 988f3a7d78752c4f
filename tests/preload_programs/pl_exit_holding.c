/* A thread that exits while it holds locks (a plain mutex and a robust one),
 * then threads still running (and locking) when the process exits. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t held;
static pthread_mutex_t robust;
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void pl_holder_init(void) {
  pthread_mutex_init(&held, NULL);
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&robust, &a);
  pthread_mutexattr_destroy(&a);
}

static void* holder(void* arg) {
  (void)arg;
  pthread_mutex_lock(&held);
  pthread_mutex_lock(&robust);
  return NULL; /* exits holding both */
}

static void* spinner(void* arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&busy);
    pthread_mutex_unlock(&busy);
  }
  return NULL;
}

int main(void) {
  int ok = 1;
  pl_holder_init();
  pthread_t t;
  pthread_create(&t, NULL, holder, NULL);
  pthread_join(t, NULL);
  ok &= pthread_mutex_trylock(&held) == EBUSY;
  /* The robust mutex's owner died: the next lock gets EOWNERDEAD and the lock. */
  int rc = pthread_mutex_lock(&robust);
  ok &= rc == EOWNERDEAD;
  ok &= pthread_mutex_consistent(&robust) == 0;
  ok &= pthread_mutex_unlock(&robust) == 0;
  ok &= pthread_mutex_lock(&robust) == 0;
  ok &= pthread_mutex_unlock(&robust) == 0;
  printf("held_ok=%d\n", ok);
  fflush(stdout);
  for (int i = 0; i < 4; ++i) {
    pthread_t s;
    pthread_create(&s, NULL, spinner, NULL);
  }
  usleep(20000);
  exit(ok ? 0 : 1); /* the spinners are still locking */
}

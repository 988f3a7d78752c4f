/* Thread parents under the interposer: main creates a child, the child a
 * grandchild; each locks a mutex (so it has a record) and stays blocked while
 * the process exits, so their records (and PARENT_THREAD_ID) stay in the region.
 * Prints the OS thread ids (threads.THREAD_OS_ID) of the three threads. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t ready_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_c = PTHREAD_COND_INITIALIZER;
static int ready = 0;
static long child_tid, grandchild_tid;

static void mark_ready(long* tid) {
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&ready_m);
  *tid = (long)syscall(SYS_gettid);
  ++ready;
  pthread_cond_broadcast(&ready_c);
  pthread_mutex_unlock(&ready_m);
  for (;;) pause();
}

static void* grandchild(void* arg) {
  (void)arg;
  mark_ready(&grandchild_tid);
  return NULL;
}

static void* child(void* arg) {
  (void)arg;
  pthread_t g;
  pthread_mutex_lock(&m); /* registered before it spawns */
  pthread_mutex_unlock(&m);
  if (pthread_create(&g, NULL, grandchild, NULL) != 0) abort();
  mark_ready(&child_tid);
  return NULL;
}

int main(void) {
  pthread_t c;
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  if (pthread_create(&c, NULL, child, NULL) != 0) return 1;
  pthread_mutex_lock(&ready_m);
  while (ready < 2) pthread_cond_wait(&ready_c, &ready_m);
  pthread_mutex_unlock(&ready_m);
  printf("main_tid=%ld\nchild_tid=%ld\ngrandchild_tid=%ld\n", (long)syscall(SYS_gettid), child_tid,
         grandchild_tid);
  fflush(stdout);
  _exit(0); /* the two threads are still blocked: their records stay */
}

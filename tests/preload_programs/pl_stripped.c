/* A program whose lock is set up by a function it does not export (built without
 * -rdynamic): stripped, the interposer names the class by the function's offset,
 * or, with its build-id debug file installed, by the function's name.
 * Usage: pl_stripped; prints locks=<n>. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { kLocks = 100 };

static pthread_mutex_t lock;

/* Not a tail call (the result is checked), so the init call site is in this function. */
__attribute__((noinline)) static void pl_stripped_init(void) {
  if (pthread_mutex_init(&lock, NULL) != 0) abort();
}

int main(void) {
  pl_stripped_init();
  for (int i = 0; i < kLocks; ++i) {
    pthread_mutex_lock(&lock);
    pthread_mutex_unlock(&lock);
  }
  printf("locks=%d\n", kLocks);
  return 0;
}

/* Spin locks and barriers of known counts: 2 threads each take the spin lock
 * kLocks times and wait at the barrier kRounds times; main tries the lock once.
 * Results checked; prints spin_locks=, barrier_waits=, failures=. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { kThreads = 2, kLocks = 1000, kRounds = 3 };

static int failures = 0;
#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "pl_spin: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);                 \
    }                                                                     \
  } while (0)

static pthread_spinlock_t spin;
static pthread_barrier_t barrier;
static long counter = 0;

/* Not tail calls (results checked): the init call sites are in this function. */
__attribute__((noinline)) void pl_spin_init_locks(void) {
  CHECK(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE) == 0);
  CHECK(pthread_barrier_init(&barrier, NULL, kThreads) == 0);
}

static void* worker(void* arg) {
  (void)arg;
  int serial = 0;
  for (int r = 0; r < kRounds; ++r) {
    for (int i = 0; i < kLocks / kRounds + (r == 0 ? kLocks % kRounds : 0); ++i) {
      CHECK(pthread_spin_lock(&spin) == 0);
      ++counter;
      CHECK(pthread_spin_unlock(&spin) == 0);
    }
    const int rc = pthread_barrier_wait(&barrier);
    CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    serial += rc == PTHREAD_BARRIER_SERIAL_THREAD;
  }
  return (void*)(long)serial;
}

int main(void) {
  pl_spin_init_locks();
  CHECK(pthread_spin_trylock(&spin) == 0);
  CHECK(pthread_spin_trylock(&spin) == EBUSY); /* held: EBUSY, as without the interposer */
  CHECK(pthread_spin_unlock(&spin) == 0);
  pthread_t t[kThreads];
  for (int i = 0; i < kThreads; ++i) CHECK(pthread_create(&t[i], NULL, worker, NULL) == 0);
  long serial = 0;
  for (int i = 0; i < kThreads; ++i) {
    void* s = NULL;
    pthread_join(t[i], &s);
    serial += (long)s;
  }
  CHECK(counter == (long)kThreads * kLocks);
  CHECK(serial == kRounds); /* one serial thread per round */
  CHECK(pthread_barrier_destroy(&barrier) == 0);
  printf("spin_locks=%d\nbarrier_waits=%d\nfailures=%d\n", kThreads * kLocks + 2, kThreads * kRounds,
         failures);
  CHECK(pthread_spin_destroy(&spin) == 0);
  return failures == 0 ? 0 : 1;
}

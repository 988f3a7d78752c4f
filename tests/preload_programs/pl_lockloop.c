/* The preload microbenchmark: an uncontended pthread mutex lock+unlock loop.
 * Usage: pl_lockloop [iterations] [repetitions]; prints the per-repetition
 * ns per lock+unlock and their minimum and median. Run it with and without
 * LD_PRELOAD=libpfs_preload.so (bench/preload_vs_plain.sh). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void pl_bench_init(pthread_mutex_t* m) {
  if (pthread_mutex_init(m, NULL) != 0) abort();
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 20000000L;
  const int reps = argc > 2 ? atoi(argv[2]) : 7;
  pthread_mutex_t m;
  pl_bench_init(&m);
  for (long i = 0; i < n / 10; ++i) { /* warm-up: registers the thread, the site, the instance */
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
  }
  double* ns = calloc((size_t)reps, sizeof(double));
  for (int r = 0; r < reps; ++r) {
    double t0 = now_ns();
    for (long i = 0; i < n; ++i) {
      pthread_mutex_lock(&m);
      pthread_mutex_unlock(&m);
      __asm__ volatile("" ::: "memory");
    }
    ns[r] = (now_ns() - t0) / (double)n;
  }
  qsort(ns, (size_t)reps, sizeof(double), cmp);
  printf("iterations=%ld\nrepetitions=%d\nmin_ns=%.2f\nmedian_ns=%.2f\n", n, reps, ns[0], ns[reps / 2]);
  free(ns);
  pthread_mutex_destroy(&m);
  return 0;
}

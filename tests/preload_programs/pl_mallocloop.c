/* The heap microbenchmark: a malloc(64)+free loop on one thread.
 * Usage: pl_mallocloop [iterations] [repetitions]; prints the ns per malloc+free
 * pair of each repetition's minimum and median. Run it with and without
 * LD_PRELOAD=libpfs_preload.so (bench/preload_malloc.sh). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* Through a volatile pointer, so the compiler keeps every call. */
static void* (*volatile do_malloc)(size_t) = malloc;
static void (*volatile do_free)(void*) = free;

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 20000000L;
  const int reps = argc > 2 ? atoi(argv[2]) : 7;
  for (long i = 0; i < n / 10; ++i) do_free(do_malloc(64)); /* warm-up: registers the thread and class */
  double* ns = calloc((size_t)reps, sizeof(double));
  for (int r = 0; r < reps; ++r) {
    double t0 = now_ns();
    for (long i = 0; i < n; ++i) do_free(do_malloc(64));
    ns[r] = (now_ns() - t0) / (double)n;
  }
  qsort(ns, (size_t)reps, sizeof(double), cmp);
  printf("iterations=%ld\nrepetitions=%d\nmin_ns=%.2f\nmedian_ns=%.2f\n", n, reps, ns[0], ns[reps / 2]);
  free(ns);
  return 0;
}

/* The heap microbenchmark: malloc(64)+free pairs on one thread, side by side in
 * one process. Blocks of pairs alternate between the C library's own malloc and
 * free (found in libc.so.6 with dlsym, so an interposer is not on their way) and
 * the malloc and free the program calls (the interposer's, under LD_PRELOAD);
 * each block pair gives one difference, and the medians are printed. Before each
 * block pair the loop's block moves to a new address (the old one is kept and a
 * pad of another size allocated after it), so the medians are taken over many
 * placements of the block:
 *   raw_ns       ns per pair through the C library's functions
 *   program_ns   ns per pair through the program's (interposed) functions
 *   over_raw_ns  the median of the per-block differences
 * Usage: pl_mallocloop [pairs per block] [blocks] (bench/preload_malloc.sh). */
#define _GNU_SOURCE
#include <dlfcn.h>
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

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef void* (*malloc_fn)(size_t);
typedef void (*free_fn)(void*);

/* Through volatile pointers, so the compiler keeps every call. */
static double block(malloc_fn volatile* m, free_fn volatile* f, long pairs) {
  double t0 = now_ns();
  for (long i = 0; i < pairs; ++i) (*f)((*m)(64));
  return (now_ns() - t0) / (double)pairs;
}

int main(int argc, char** argv) {
  const long pairs = argc > 1 ? atol(argv[1]) : 200000L;
  const int blocks = argc > 2 ? atoi(argv[2]) : 101;
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  malloc_fn found_malloc = NULL;
  free_fn found_free = NULL;
  if (libc != NULL) { /* POSIX's way to convert dlsym's result (ISO C has none) */
    *(void**)&found_malloc = dlsym(libc, "malloc");
    *(void**)&found_free = dlsym(libc, "free");
  }
  malloc_fn volatile raw_malloc = found_malloc;
  free_fn volatile raw_free = found_free;
  malloc_fn volatile program_malloc = malloc;
  free_fn volatile program_free = free;
  if (raw_malloc == NULL || raw_free == NULL || blocks < 1) {
    fprintf(stderr, "pl_mallocloop: the C library's malloc and free were not found\n");
    return 1;
  }
  /* Warm-up: registers the thread and the class. */
  block(&program_malloc, &program_free, pairs);
  block(&raw_malloc, &raw_free, pairs);
  double* raw = calloc((size_t)blocks * 3, sizeof(double));
  void** kept = calloc((size_t)blocks * 2, sizeof(void*));
  double* program = raw + blocks;
  double* diff = program + blocks;
  for (int b = 0; b < blocks; ++b) {
    kept[2 * b] = raw_malloc(64);                                      /* the block of the last pair */
    kept[2 * b + 1] = raw_malloc(16 + (size_t)(b * 208 + 48) % 4000);  /* the next one lands after */
    /* Alternate which side goes first, so neither always follows the other. */
    if (b % 2) {
      raw[b] = block(&raw_malloc, &raw_free, pairs);
      program[b] = block(&program_malloc, &program_free, pairs);
    } else {
      program[b] = block(&program_malloc, &program_free, pairs);
      raw[b] = block(&raw_malloc, &raw_free, pairs);
    }
    diff[b] = program[b] - raw[b];
  }
  printf("pairs_per_block=%ld\nblocks=%d\nraw_ns=%.2f\nprogram_ns=%.2f\nover_raw_ns=%.2f\n", pairs, blocks,
         median(raw, blocks), median(program, blocks), median(diff, blocks));
  for (int b = 0; b < 2 * blocks; ++b) raw_free(kept[b]);
  free(kept);
  free(raw);
  return 0;
}

/* Known allocations on two threads, for the interposer's memory test: thread A
 * mallocs 100 blocks of 1000 bytes and frees 40; thread B callocs 50 blocks of
 * 3000 bytes and reallocs each to 6000. Both stay alive (their rows stay in the
 * region) while main prints what they did, in the allocator's usable sizes, and
 * leaves with _exit. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

struct counts {
  long tid, allocs, frees;
  unsigned long alloc_bytes, free_bytes;
};
static struct counts a, b;
static pthread_barrier_t done;

static void* thread_a(void* arg) {
  (void)arg;
  static void* blocks[100];
  a.tid = syscall(SYS_gettid);
  for (int i = 0; i < 100; ++i) {
    blocks[i] = malloc(1000);
    a.allocs++;
    a.alloc_bytes += malloc_usable_size(blocks[i]);
  }
  for (int i = 0; i < 40; ++i) {
    a.frees++;
    a.free_bytes += malloc_usable_size(blocks[i]);
    free(blocks[i]);
  }
  pthread_barrier_wait(&done);
  for (;;) pause();
  return NULL;
}

static void* thread_b(void* arg) {
  (void)arg;
  static void* blocks[50];
  b.tid = syscall(SYS_gettid);
  for (int i = 0; i < 50; ++i) {
    blocks[i] = calloc(1, 3000);
    b.allocs++;
    b.alloc_bytes += malloc_usable_size(blocks[i]);
  }
  for (int i = 0; i < 50; ++i) {
    /* realloc: a free of the old block's size and an allocation of the new one */
    b.frees++;
    b.free_bytes += malloc_usable_size(blocks[i]);
    blocks[i] = realloc(blocks[i], 6000);
    b.allocs++;
    b.alloc_bytes += malloc_usable_size(blocks[i]);
  }
  pthread_barrier_wait(&done);
  for (;;) pause();
  return NULL;
}

int main(void) {
  pthread_t ta, tb;
  pthread_barrier_init(&done, NULL, 3);
  pthread_create(&ta, NULL, thread_a, NULL);
  pthread_create(&tb, NULL, thread_b, NULL);
  pthread_barrier_wait(&done);
  printf("a_tid=%ld\na_allocs=%ld\na_frees=%ld\na_alloc_bytes=%lu\na_free_bytes=%lu\n", a.tid, a.allocs, a.frees,
         a.alloc_bytes, a.free_bytes);
  printf("b_tid=%ld\nb_allocs=%ld\nb_frees=%ld\nb_alloc_bytes=%lu\nb_free_bytes=%lu\n", b.tid, b.allocs, b.frees,
         b.alloc_bytes, b.free_bytes);
  fflush(stdout);
  _exit(0);
}

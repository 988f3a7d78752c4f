/* Known allocations on three threads, for the interposer's memory test: thread A
 * mallocs 100 blocks of 1000 bytes and frees 40; thread B callocs 50 blocks of
 * 3000 bytes and reallocs each to 6000; thread C maps anonymous memory (3, 5 and 2
 * pages), unmaps the first whole and the second's first 2 pages, remaps the third
 * to 4 pages, and maps a file (not counted). All stay alive (their rows stay in
 * the region) while main prints what they did, in the allocator's usable sizes and
 * in bytes of whole pages, and leaves with _exit. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct counts {
  long tid, allocs, frees;
  unsigned long alloc_bytes, free_bytes;
};
static struct counts a, b, c;
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

static void* thread_c(void* arg) {
  (void)arg;
  const unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
  c.tid = syscall(SYS_gettid);
  const int prot = PROT_READ | PROT_WRITE, anon = MAP_PRIVATE | MAP_ANONYMOUS;
  char* m3 = mmap(NULL, 3 * page, prot, anon, -1, 0);
  char* m5 = mmap(NULL, 5 * page, prot, anon, -1, 0);
  char* m2 = mmap(NULL, 2 * page - 100, prot, anon, -1, 0); /* counted in whole pages */
  if (m3 == MAP_FAILED || m5 == MAP_FAILED || m2 == MAP_FAILED) abort();
  c.allocs += 3;
  c.alloc_bytes += 10 * page;
  munmap(m3, 3 * page);
  munmap(m5, 2 * page); /* 3 pages of it stay mapped */
  c.frees += 2;
  c.free_bytes += 5 * page;
  char* m4 = mremap(m2, 2 * page, 4 * page, MREMAP_MAYMOVE); /* a free of 2 pages, an alloc of 4 */
  if (m4 == MAP_FAILED) abort();
  c.frees += 1;
  c.free_bytes += 2 * page;
  c.allocs += 1;
  c.alloc_bytes += 4 * page;
  /* A file's map is not memory the program allocates. */
  FILE* f = tmpfile();
  if (f == NULL || fputs("pl_memory", f) < 0 || fflush(f) != 0) abort();
  void* fm = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fileno(f), 0);
  if (fm == MAP_FAILED) abort();
  munmap(fm, page);
  pthread_barrier_wait(&done);
  for (;;) pause();
  return NULL;
}

int main(void) {
  pthread_t ta, tb, tc;
  pthread_barrier_init(&done, NULL, 4);
  pthread_create(&ta, NULL, thread_a, NULL);
  pthread_create(&tb, NULL, thread_b, NULL);
  pthread_create(&tc, NULL, thread_c, NULL);
  pthread_barrier_wait(&done);
  printf("a_tid=%ld\na_allocs=%ld\na_frees=%ld\na_alloc_bytes=%lu\na_free_bytes=%lu\n", a.tid, a.allocs, a.frees,
         a.alloc_bytes, a.free_bytes);
  printf("b_tid=%ld\nb_allocs=%ld\nb_frees=%ld\nb_alloc_bytes=%lu\nb_free_bytes=%lu\n", b.tid, b.allocs, b.frees,
         b.alloc_bytes, b.free_bytes);
  printf("c_tid=%ld\nc_allocs=%ld\nc_frees=%ld\nc_alloc_bytes=%lu\nc_free_bytes=%lu\n", c.tid, c.allocs, c.frees,
         c.alloc_bytes, c.free_bytes);
  fflush(stdout);
  _exit(0);
}

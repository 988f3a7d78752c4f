/* Exit handlers that destroy what the program made: 40 mutexes made by
 * pl_exit_make, each locked once, and 40 blocks of 1000 bytes, destroyed and freed
 * by an atexit handler. "exit" calls exit(0) (the interposer sees it: the region
 * keeps the mutexes and the memory of that moment); "return" returns from main
 * (exit inside the C library, unseen: the handler's destroys are booked). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kObjects = 40, kBlock = 1000 };

static pthread_mutex_t* mutexes;
static char* blocks[kObjects];

__attribute__((noinline)) void pl_exit_make(pthread_mutex_t* m) {
  if (pthread_mutex_init(m, NULL) != 0) abort();
}

static void destroy_all(void) {
  for (int i = 0; i < kObjects; ++i) {
    pthread_mutex_destroy(&mutexes[i]);
    free(blocks[i]);
  }
  free(mutexes);
}

int main(int argc, char** argv) {
  const int by_exit = argc > 1 && strcmp(argv[1], "exit") == 0;
  mutexes = malloc(kObjects * sizeof(pthread_mutex_t));
  if (mutexes == NULL) return 2;
  for (int i = 0; i < kObjects; ++i) {
    pl_exit_make(&mutexes[i]);
    pthread_mutex_lock(&mutexes[i]);
    pthread_mutex_unlock(&mutexes[i]);
    blocks[i] = malloc(kBlock);
    if (blocks[i] == NULL) return 2;
    memset(blocks[i], 1, kBlock);
  }
  atexit(destroy_all);
  printf("objects=%d\n", kObjects);
  fflush(stdout);
  if (by_exit) exit(0);
  return 0;
}

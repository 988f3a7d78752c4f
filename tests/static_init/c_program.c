/* A C program that instruments its mutex before main, from a constructor function
 * (C's way to run code at start-up), with the static agent (tests/end_to_end/test_static_init.cpp).
 * Locks it LOCKS times (default 10); prints agent_active=0|1 and init_from_env=0|-1. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/provider/pfs_c.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pfs_sync* lock_handle;

__attribute__((constructor)) static void instrument_early(void) {
  lock_handle = pfs_init_mutex(pfs_register_mutex("static_init", "c_lock"), &lock);
}

int main(void) {
  const char* n_text = getenv("LOCKS");
  const int n = n_text != NULL ? atoi(n_text) : 10;
  for (int i = 0; i < n; ++i) {
    pfs_wait_locker l;
    const int rec = pfs_start_mutex_wait(&l, lock_handle, PFS_OP_LOCK, __FILE__, __LINE__);
    pthread_mutex_lock(&lock);
    if (rec) pfs_end_mutex_wait(&l, 0);
    pfs_unlock_mutex(lock_handle);
    pthread_mutex_unlock(&lock);
  }
  printf("agent_active=%d\n", pfs_active());
  printf("init_from_env=%d\n", pfs_init_from_env()); /* 0, or -1 when the agent could not start */
  return 0;
}

/* A C program built against the installed perfschema (tests/live/install_test.sh):
 * with CMake (a C-only project), with pkg-config and against libperfschema.so.
 * Locks an instrumented mutex LOCKS times through the C ABI, as a C library
 * wraps its own locks, then says how many. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/provider/pfs_c.h"

static pthread_mutex_t orders = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char** argv) {
  if (pfs_init_from_env() != 0) {
    fprintf(stderr, "pfs_consumer_c: %s\n", pfs_last_error());
    return 1;
  }
  const int locks = argc > 1 ? atoi(argv[1]) : 1000;
  const pfs_key key = pfs_register_mutex("consumer_c", "orders_lock");
  pfs_sync* m = pfs_init_mutex(key, &orders);
  if (m == NULL) return 2;
  for (int i = 0; i < locks; ++i) {
    pfs_wait_locker locker;
    const int rec = pfs_start_mutex_wait(&locker, m, PFS_OP_LOCK, __FILE__, __LINE__);
    const int rc = pthread_mutex_lock(&orders);
    if (rec) pfs_end_mutex_wait(&locker, rc);
    pfs_unlock_mutex(m);
    pthread_mutex_unlock(&orders);
  }
  pfs_destroy_sync(m);
  printf("locks=%d\n", locks);
  return 0;
}

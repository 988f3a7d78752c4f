/* A plugin loaded at run time (dlopen) that instruments itself through the
 * service table (pfs_service.h) and has no link with the agent: it finds
 * pfs_get_interface in the program that loaded it. tests/agent/test_service.cpp. */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "agent/provider/pfs_service.h"

typedef const void* (*get_interface_fn)(int);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Locks its mutex n times, recording each wait; returns the waits it recorded,
 * or a negative number saying what was missing. */
__attribute__((visibility("default"))) int pfs_test_plugin_run(int n) {
  get_interface_fn get;
  void* sym = dlsym(RTLD_DEFAULT, "pfs_get_interface");
  memcpy(&get, &sym, sizeof get); /* POSIX: a data pointer from dlsym is a function pointer */
  if (get == NULL) return -1;
  if (get(99) != NULL) return -2; /* a version the agent does not know */
  const pfs_service_v1* pfs = (const pfs_service_v1*)get(PFS_SERVICE_VERSION_1);
  if (pfs == NULL || pfs->version != PFS_SERVICE_VERSION_1 || pfs->size < sizeof(pfs_service_v1)) return -3;
  pfs_key key = pfs->register_mutex("plugin", "lock");
  pfs_sync* m = pfs->init_mutex(key, &lock);
  if (m == NULL) return -4;
  int recorded = 0;
  for (int i = 0; i < n; ++i) {
    pfs_wait_locker l;
    const int rec = pfs->start_mutex_wait(&l, m, PFS_OP_LOCK, __FILE__, __LINE__);
    pthread_mutex_lock(&lock);
    if (rec) {
      pfs->end_mutex_wait(&l, 0);
      ++recorded;
    }
    pfs->unlock_mutex(m);
    pthread_mutex_unlock(&lock);
  }
  pfs->destroy_sync(m);
  return recorded;
}

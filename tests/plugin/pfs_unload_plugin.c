/* A plugin that leaves its instances behind: it creates a mutex, an rwlock, a
 * condition, a file and a table under its own category ("unloadme"), records
 * waits on the mutex and bytes on the file, and destroys none of them. The
 * program unloads it with pfs_unload_plugin("unloadme") before dlclose.
 * tests/agent/test_plugin_unload.cpp. Instruments itself through the service
 * table, as pfs_test_plugin.c. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "agent/provider/pfs_service.h"

typedef const void* (*get_interface_fn)(int);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

/* Records n waits on its mutex and writes `bytes` bytes to `path` (kept open);
 * returns the waits recorded, or a negative number saying what was missing. */
__attribute__((visibility("default"))) int unload_plugin_run(int n, const char* path, int bytes) {
  get_interface_fn get;
  void* sym = dlsym(RTLD_DEFAULT, "pfs_get_interface");
  memcpy(&get, &sym, sizeof get);
  if (get == NULL) return -1;
  const pfs_service_v1* pfs = (const pfs_service_v1*)get(PFS_SERVICE_VERSION_1);
  if (pfs == NULL) return -2;
  pfs_sync* m = pfs->init_mutex(pfs->register_mutex("unloadme", "lock"), &lock);
  pfs_sync* rw = pfs->init_rwlock(pfs->register_rwlock("unloadme", "rwlock"), &rwlock);
  pfs_sync* c = pfs->init_cond(pfs->register_cond("unloadme", "cond"), &cond);
  if (m == NULL || rw == NULL || c == NULL) return -3;
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
  const pfs_key file_class = pfs->register_file("unloadme", "data");
  pfs_wait_locker l;
  const int rec = pfs->start_file_name_wait(&l, file_class, PFS_FILE_CREATE, path, __FILE__, __LINE__);
  const int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
  if (rec) pfs->end_file_open_wait(&l, fd);
  if (fd < 0) return -4;
  char buf[256];
  memset(buf, 'x', sizeof buf);
  for (int left = bytes; left > 0;) {
    const int chunk = left < (int)sizeof buf ? left : (int)sizeof buf;
    const int w = pfs->start_file_wait(&l, fd, PFS_FILE_WRITE, __FILE__, __LINE__);
    const ssize_t done = write(fd, buf, (size_t)chunk);
    if (w) pfs->end_file_wait(&l, done);
    if (done <= 0) return -5;
    left -= (int)done;
  }
  pfs_table* t = pfs->declare_table(pfs->register_table_io("unloadme"), PFS_OBJECT_TABLE, "unloadme", "t1");
  if (t == NULL) return -6;
  return recorded; /* the descriptor stays open, as a plugin that leaks it */
}

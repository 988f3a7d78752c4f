/* The agent's C ABI: register instrument classes, create and destroy instrumented
 * objects, and wrap the real calls in start/end waits. C code and plugins use it
 * directly; the C++ API (pfs.h) sits on it.
 *
 * Calling pattern (as MySQL's PSI interface):
 *
 *     pfs_wait_locker locker;
 *     if (*flags & PFS_ENABLED) {            // one predictable branch when disabled
 *       int rec = pfs_start_mutex_wait(&locker, m, PFS_OP_LOCK, __FILE__, __LINE__);
 *       int rc = pthread_mutex_lock(&real);
 *       if (rec) pfs_end_mutex_wait(&locker, rc);
 *     }
 *
 * Every function is safe to call when the agent is not initialized or an array is
 * full: keys are then 0, handles NULL, and nothing is recorded. No function blocks,
 * allocates or fails the caller on the event path. */
#ifndef PFS_C_H
#define PFS_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t pfs_key; /* 1-based instrument class; 0 = not instrumented */
typedef struct pfs_sync pfs_sync; /* an instrumented mutex, rwlock or condition */

/* The flags byte of a class (pfs_class_flags) or a handle (pfs_sync_flags). */
#define PFS_ENABLED 1
#define PFS_TIMED 2

/* Operations of the start functions (OPERATION column). */
#define PFS_OP_LOCK 1
#define PFS_OP_TRY_LOCK 2
#define PFS_OP_READ_LOCK 3
#define PFS_OP_WRITE_LOCK 4
#define PFS_OP_TRY_READ_LOCK 5
#define PFS_OP_TRY_WRITE_LOCK 6
#define PFS_OP_WAIT 7
#define PFS_OP_TIMED_WAIT 8

/* Opaque, caller-allocated (on the stack) state of one wait in progress. */
typedef struct pfs_wait_locker {
  uint64_t opaque[24];
} pfs_wait_locker;

/* Start-up. pfs_init_from_env reads PFS_REGION and the other PFS_* variables;
 * returns 0 on success, -1 if the agent stays disabled (the reason is in
 * pfs_last_error()). Idempotent. */
int pfs_init_from_env(void);
const char* pfs_last_error(void);
int pfs_active(void);
void pfs_shutdown(void);

/* Classes: names become wait/synch/mutex/<category>/<name> and so on.
 * Registering the same name twice returns the same key. */
pfs_key pfs_register_mutex(const char* category, const char* name);
pfs_key pfs_register_rwlock(const char* category, const char* name);
pfs_key pfs_register_cond(const char* category, const char* name);
pfs_key pfs_register_thread(const char* category, const char* name);
/* Pointer to the flags byte the hot path tests (never NULL). */
const volatile unsigned char* pfs_class_flags(pfs_key key);

/* Instances. identity: the address shown as OBJECT_INSTANCE_BEGIN. */
pfs_sync* pfs_init_mutex(pfs_key key, const void* identity);
pfs_sync* pfs_init_rwlock(pfs_key key, const void* identity);
pfs_sync* pfs_init_cond(pfs_key key, const void* identity);
void pfs_destroy_sync(pfs_sync* handle);

/* Waits. start returns 1 when the matching end must be called, 0 when nothing
 * more is to be done. rc: the real call's result (0 = acquired). */
int pfs_start_mutex_wait(pfs_wait_locker* locker, pfs_sync* m, int op, const char* file, unsigned line);
void pfs_end_mutex_wait(pfs_wait_locker* locker, int rc);
void pfs_unlock_mutex(pfs_sync* m);
int pfs_start_rwlock_wait(pfs_wait_locker* locker, pfs_sync* rw, int op, const char* file, unsigned line);
void pfs_end_rwlock_wait(pfs_wait_locker* locker, int rc);
void pfs_unlock_rwlock(pfs_sync* rw);
/* m: the mutex the condition waits with (its owner is cleared while waiting). */
int pfs_start_cond_wait(pfs_wait_locker* locker, pfs_sync* cond, pfs_sync* m, int op, const char* file,
                        unsigned line);
void pfs_end_cond_wait(pfs_wait_locker* locker, int rc);

/* Threads. A thread that never registers gets a record (thread/pfs/unregistered)
 * on its first event. Registering gives it a class and a name; an actor (user,
 * host, role) makes it a foreground thread matched against setup_actors. */
void pfs_register_current_thread(pfs_key thread_class, const char* name);
void pfs_set_thread_actor(const char* user, const char* host, const char* role);
uint64_t pfs_current_thread_id(void); /* THREAD_ID, 0 if none */
void pfs_unregister_current_thread(void);

#ifdef __cplusplus
}
#endif

#endif /* PFS_C_H */

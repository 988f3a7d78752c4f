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

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Every function is declared once, as
 *
 *     PFS_C_FN(return type, name, (parameters), its value without the agent)
 *     PFS_C_VOID(name, (parameters))
 *
 * which is the declaration "type name(parameters);". With PFS_NO_INSTRUMENTATION
 * (the program is built without the agent) it is instead a static inline that does
 * nothing and returns that value: a wait start 0, a handle NULL, pfs_spawn_thread
 * is pthread_create. */
#ifdef PFS_NO_INSTRUMENTATION
#define PFS_C_FN(type, name, params, off) \
  static inline type name params { return off; }
#define PFS_C_VOID(name, params) \
  static inline void name params {}
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif
#else
#define PFS_C_FN(type, name, params, off) type name params;
#define PFS_C_VOID(name, params) void name params;
#endif

#ifdef __cplusplus
extern "C" {
#endif
/* The declarations are laid out by hand: clang-format takes the parameters in
 * PFS_C_FN for an expression ("pfs_sync * m"). */
/* clang-format off */

typedef uint32_t pfs_key;         /* 1-based instrument class; 0 = not instrumented */
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
#define PFS_OP_TRY_WAIT 53 /* a semaphore's sem_trywait (kOpTryWait) */

#ifdef PFS_NO_INSTRUMENTATION
static const volatile unsigned char pfs_no_flags_ = 0; /* pfs_class_flags: never enabled */
#endif

/* Opaque, caller-allocated (on the stack) state of one wait in progress. */
typedef struct pfs_wait_locker {
  uint64_t opaque[24];
} pfs_wait_locker;

/* Start-up. pfs_init_from_env reads PFS_REGION and the other PFS_* variables;
 * returns 0 on success, -1 if the agent stays disabled (the reason is in
 * pfs_last_error()). Idempotent. */
PFS_C_FN(int, pfs_init_from_env, (void), -1)
PFS_C_FN(const char*, pfs_last_error, (void), "instrumentation compiled out (PFS_NO_INSTRUMENTATION)")
PFS_C_FN(int, pfs_active, (void), 0)
PFS_C_VOID(pfs_shutdown, (void))

/* Classes: names become wait/synch/mutex/<category>/<name> and so on.
 * Registering the same name twice returns the same key. */
PFS_C_FN(pfs_key, pfs_register_mutex, (const char* category, const char* name), 0)
PFS_C_FN(pfs_key, pfs_register_rwlock, (const char* category, const char* name), 0)
PFS_C_FN(pfs_key, pfs_register_cond, (const char* category, const char* name), 0)
/* wait/synch/sem/<category>/<name>: a counting semaphore (beyond MySQL). */
PFS_C_FN(pfs_key, pfs_register_sem, (const char* category, const char* name), 0)
PFS_C_FN(pfs_key, pfs_register_thread, (const char* category, const char* name), 0)
/* Pointer to the flags byte the hot path tests (never NULL). */
PFS_C_FN(const volatile unsigned char*, pfs_class_flags, (pfs_key key), &pfs_no_flags_)

/* Instances. identity: the address shown as OBJECT_INSTANCE_BEGIN. */
PFS_C_FN(pfs_sync*, pfs_init_mutex, (pfs_key key, const void* identity), NULL)
PFS_C_FN(pfs_sync*, pfs_init_rwlock, (pfs_key key, const void* identity), NULL)
PFS_C_FN(pfs_sync*, pfs_init_cond, (pfs_key key, const void* identity), NULL)
PFS_C_FN(pfs_sync*, pfs_init_sem, (pfs_key key, const void* identity), NULL)
PFS_C_VOID(pfs_destroy_sync, (pfs_sync* handle))

/* Waits. start returns 1 when the matching end must be called, 0 when nothing
 * more is to be done. rc: the real call's result (0 = acquired). */
PFS_C_FN(int, pfs_start_mutex_wait,
         (pfs_wait_locker* locker, pfs_sync* m, int op, const char* file, unsigned line), 0)
PFS_C_VOID(pfs_end_mutex_wait, (pfs_wait_locker* locker, int rc))
PFS_C_VOID(pfs_unlock_mutex, (pfs_sync* m))
PFS_C_FN(int, pfs_start_rwlock_wait,
         (pfs_wait_locker* locker, pfs_sync* rw, int op, const char* file, unsigned line), 0)
PFS_C_VOID(pfs_end_rwlock_wait, (pfs_wait_locker* locker, int rc))
PFS_C_VOID(pfs_unlock_rwlock, (pfs_sync* rw))
/* m: the mutex the condition waits with (its owner is cleared while waiting). */
PFS_C_FN(int, pfs_start_cond_wait,
         (pfs_wait_locker* locker, pfs_sync* cond, pfs_sync* m, int op, const char* file, unsigned line), 0)
PFS_C_VOID(pfs_end_cond_wait, (pfs_wait_locker* locker, int rc))
/* Before signalling or broadcasting a condition: the caller is the thread that
 * ends the waits (their SIGNALLING_THREAD_ID). */
PFS_C_VOID(pfs_signal_cond, (pfs_sync* cond))
PFS_C_VOID(pfs_broadcast_cond, (pfs_sync* cond))

/* ---------------------------------------------------------------------------
 * File io: classes wait/io/file/<category>/<name>. The wrappers of pfs_io.h
 * call these around the real system calls; C code can do the same.
 * OPERATION values: */
#define PFS_FILE_CREATE 9
#define PFS_FILE_OPEN 10
#define PFS_FILE_CLOSE 11
#define PFS_FILE_READ 12
#define PFS_FILE_WRITE 13
#define PFS_FILE_SEEK 14
#define PFS_FILE_TELL 15
#define PFS_FILE_FLUSH 16
#define PFS_FILE_STAT 17
#define PFS_FILE_CHSIZE 18
#define PFS_FILE_DELETE 19
#define PFS_FILE_RENAME 20
#define PFS_FILE_SYNC 21

PFS_C_FN(pfs_key, pfs_register_file, (const char* category, const char* name), 0)
/* Waits on a file named by path (create, open, stat, delete, rename). */
PFS_C_FN(int, pfs_start_file_name_wait,
         (pfs_wait_locker* locker, pfs_key key, int op, const char* path, const char* file, unsigned line), 0)
/* create/open: fd is the real call's result (-1 on failure); binds fd to the file. */
PFS_C_VOID(pfs_end_file_open_wait, (pfs_wait_locker* locker, int fd))
/* stat, delete, rename: rc is the real call's result; new_path for rename. */
PFS_C_VOID(pfs_end_file_name_wait, (pfs_wait_locker* locker, int rc, const char* new_path))
/* Waits on an open descriptor (read, write, seek, tell, flush, stat, chsize, sync, close). */
PFS_C_FN(int, pfs_start_file_wait,
         (pfs_wait_locker* locker, int fd, int op, const char* file, unsigned line), 0)
/* bytes: what the call transferred, or -1. */
PFS_C_VOID(pfs_end_file_wait, (pfs_wait_locker* locker, int64_t bytes))
/* close: after the real close; unbinds fd whatever the result. */
PFS_C_VOID(pfs_end_file_close_wait, (pfs_wait_locker* locker, int fd))
/* For descriptors the wrappers did not open (dup, sockets): forget fd. */
PFS_C_VOID(pfs_forget_fd, (int fd))

/* ---------------------------------------------------------------------------
 * Table io (WL#4895): classes wait/io/table/<category>/handler. */
#define PFS_TABLE_FETCH 22
#define PFS_TABLE_INSERT 23
#define PFS_TABLE_UPDATE 24
#define PFS_TABLE_DELETE 25
#define PFS_OBJECT_TABLE 1
#define PFS_OBJECT_TEMPORARY_TABLE 2

typedef struct pfs_table pfs_table;
PFS_C_FN(pfs_key, pfs_register_table_io, (const char* category), 0)
/* Declares a table (OBJECT_TYPE, OBJECT_SCHEMA, OBJECT_NAME); declaring it again
 * returns the same share. NULL when the table array is full (counted as lost). */
PFS_C_FN(pfs_table*, pfs_declare_table,
         (pfs_key key, int object_type, const char* schema, const char* name), NULL)
/* Declares an index of the table; returns its 1-based number, 0 if lost. */
PFS_C_FN(unsigned, pfs_declare_table_index, (pfs_table* table, const char* index_name), 0)
/* Forgets a dropped table (its statistics go with it). */
PFS_C_VOID(pfs_drop_table, (pfs_table* table))
/* index: 1-based declared index or 0 (none); flags: the FLAGS column. */
PFS_C_FN(int, pfs_start_table_io_wait,
         (pfs_wait_locker* locker, pfs_table* table, int op, unsigned index, unsigned flags,
          const char* file, unsigned line),
         0)
/* rows: how many rows the event covers (a batch counts them all). */
PFS_C_VOID(pfs_end_table_io_wait, (pfs_wait_locker* locker, uint64_t rows))

/* ---------------------------------------------------------------------------
 * Table locks (MySQL's psi_table.h start_table_lock_wait): waits of class
 * wait/lock/table/<category>/handler, the lock class of the table's io class
 * (made with it), on a declared table. The kinds, in MySQL's PFS_TL_LOCK_TYPE
 * order (OPERATION "read normal" ... "write external"): */
#define PFS_TABLE_LOCK_READ_NORMAL 0
#define PFS_TABLE_LOCK_READ_WITH_SHARED_LOCKS 1
#define PFS_TABLE_LOCK_READ_HIGH_PRIORITY 2
#define PFS_TABLE_LOCK_READ_NO_INSERT 3
#define PFS_TABLE_LOCK_WRITE_ALLOW_WRITE 4
#define PFS_TABLE_LOCK_WRITE_CONCURRENT_INSERT 5
#define PFS_TABLE_LOCK_WRITE_LOW_PRIORITY 6
#define PFS_TABLE_LOCK_WRITE_NORMAL 7
#define PFS_TABLE_LOCK_READ_EXTERNAL 8
#define PFS_TABLE_LOCK_WRITE_EXTERNAL 9
/* 0 (nothing recorded, do not call the end) for a NULL table, a kind outside
 * 0..9, or a lock instrument or table that setup_objects turned off. */
PFS_C_FN(int, pfs_start_table_lock_wait,
         (pfs_wait_locker* locker, pfs_table* table, int lock_kind, const char* file, unsigned line), 0)
PFS_C_VOID(pfs_end_table_lock_wait, (pfs_wait_locker* locker))

/* ---------------------------------------------------------------------------
 * Socket io: classes wait/io/socket/<category>/<name>, one socket_instances row
 * per open socket descriptor. The wrappers of pfs_socket.h call these around the
 * real calls; C code can do the same. OPERATION values (MySQL's words; accept is
 * a "connect" wait on the listening socket, as in MySQL): */
#define PFS_SOCKET_CREATE 27
#define PFS_SOCKET_CONNECT 28
#define PFS_SOCKET_BIND 29
#define PFS_SOCKET_CLOSE 30
#define PFS_SOCKET_SEND 31
#define PFS_SOCKET_RECV 32
#define PFS_SOCKET_SENDTO 33
#define PFS_SOCKET_RECVFROM 34
#define PFS_SOCKET_SENDMSG 35
#define PFS_SOCKET_RECVMSG 36
#define PFS_SOCKET_SEEK 37
#define PFS_SOCKET_OPT 38
#define PFS_SOCKET_STAT 39
#define PFS_SOCKET_SHUTDOWN 40
#define PFS_SOCKET_SELECT 41
/* socket_instances.STATE */
#define PFS_SOCKET_STATE_IDLE 1
#define PFS_SOCKET_STATE_ACTIVE 2

PFS_C_FN(pfs_key, pfs_register_socket, (const char* category, const char* name), 0)
/* A new socket descriptor (from socket, socketpair, accept): its row, owned by the
 * calling thread. addr (a struct sockaddr of addr_len bytes, or NULL) gives IP and
 * PORT. Returns 0 when not recorded (agent off, no class, array full: counted as
 * socket_instances_lost). */
PFS_C_FN(int, pfs_init_socket, (pfs_key key, int fd, const void* addr, unsigned addr_len), 0)
/* IP and PORT: the peer after connect, the local address after bind. */
PFS_C_VOID(pfs_set_socket_address, (int fd, const void* addr, unsigned addr_len))
/* STATE: PFS_SOCKET_STATE_IDLE while the program waits for a request on it. */
PFS_C_VOID(pfs_set_socket_state, (int fd, int state))
/* THREAD_ID: the calling thread (a connection handed to a worker). */
PFS_C_VOID(pfs_set_socket_owner, (int fd))
/* The class of fd's row, 0 if none (accept gives the new socket its listener's). */
PFS_C_FN(pfs_key, pfs_socket_class, (int fd), 0)
PFS_C_FN(int, pfs_start_socket_wait,
         (pfs_wait_locker* locker, int fd, int op, const char* file, unsigned line), 0)
/* bytes: what the call transferred, or -1. */
PFS_C_VOID(pfs_end_socket_wait, (pfs_wait_locker* locker, int64_t bytes))
/* close: after the real close; the row goes whatever the result. */
PFS_C_VOID(pfs_end_socket_close_wait, (pfs_wait_locker* locker, int fd))
/* A socket descriptor closed without a recorded wait: its row goes. */
PFS_C_VOID(pfs_destroy_socket, (int fd))

/* ---------------------------------------------------------------------------
 * Memory (MySQL's psi_memory.h): classes memory/<category>/<name>, counted (never
 * timed) per thread and class in memory_summary_by_thread_by_event_name and per
 * class in memory_summary_global_by_event_name. Each call returns the key to pass
 * to the block's later calls, 0 when the block is not counted (agent off, class
 * disabled, thread not instrumented): a block counted at allocation is counted at
 * free whatever the setup says then.
 *
 *   pfs_key cache = pfs_register_memory("app", "cache", 0);  // memory/app/cache
 *   pfs_memory_owner owner;
 *   pfs_key k = pfs_memory_alloc(cache, n, &owner);
 *   void* p = malloc(n);
 *   ...
 *   pfs_memory_free(k, n, owner);
 *   free(p);
 *
 * owner records the allocating thread: a block freed by another thread is counted
 * in the freeing thread's row (as MySQL), and pfs_memory_claim moves a block to the
 * calling thread (its old owner's row counts it freed). */
typedef uint64_t pfs_memory_owner;
/* flags of pfs_register_memory: */
#define PFS_MEMORY_GLOBAL_ONLY 1 /* one global row only (MySQL's PSI_FLAG_ONLY_GLOBAL_STAT) */
#define PFS_MEMORY_CONTROLLED 2  /* counts towards threads.CONTROLLED_MEMORY (PSI_FLAG_MEM_COLLECT) */
PFS_C_FN(pfs_key, pfs_register_memory, (const char* category, const char* name, unsigned flags), 0)
PFS_C_FN(pfs_key, pfs_memory_alloc, (pfs_key key, size_t size, pfs_memory_owner* owner), 0)
/* A block of old_size bytes became new_size bytes (counted as a free and an alloc). */
PFS_C_FN(pfs_key, pfs_memory_realloc, (pfs_key key, size_t old_size, size_t new_size, pfs_memory_owner* owner), 0)
/* The calling thread takes the block over; *owner becomes it. */
PFS_C_FN(pfs_key, pfs_memory_claim, (pfs_key key, size_t size, pfs_memory_owner* owner), 0)
PFS_C_VOID(pfs_memory_free, (pfs_key key, size_t size, pfs_memory_owner owner))

/* ---------------------------------------------------------------------------
 * Errors (MySQL's psi_error.h): the program declares its errors once (number,
 * name, SQLSTATE), then reports each as raised, or as handled (a handled error
 * moves from SUM_ERROR_RAISED to SUM_ERROR_HANDLED, as MySQL counts it), per
 * thread and error in events_errors_summary_by_thread_by_error and per error in
 * events_errors_summary_global_by_error. An error reported without being declared
 * is counted in the NULL row. pfs_statement_set_error counts its MYSQL_ERRNO as
 * raised: do not report it again.
 *
 *   pfs_register_error(1032, "ER_KEY_NOT_FOUND", "HY000");  // after the agent starts
 *   pfs_log_error(1032, PFS_ERROR_RAISED);
 *
 * pfs_register_error returns 1 when the error is declared (or already was), 0 when
 * it cannot be (agent off, a name too long, the table full: counted as lost). */
#define PFS_ERROR_RAISED 0  /* PSI_ERROR_OPERATION_RAISED */
#define PFS_ERROR_HANDLED 1 /* PSI_ERROR_OPERATION_HANDLED */
PFS_C_FN(int, pfs_register_error, (int number, const char* name, const char* sql_state), 0)
PFS_C_VOID(pfs_log_error, (int number, int operation))

/* ---------------------------------------------------------------------------
 * TLS channels (MySQL's psi_tls_channel.h): a TLS context the program names (two
 * may share a name, as MySQL's mysql_main and mysql_admin could) and its
 * properties with their current values, one row each in tls_channel_status.
 *
 *   pfs_tls_channel* c = pfs_register_tls_channel("mysql_main");
 *   pfs_tls_channel_set(c, "Current_tls_version", "TLSv1.2,TLSv1.3");
 *   pfs_tls_channel_set(c, "Ssl_accepts", "12");  // later: the same row, new value
 *   pfs_unregister_tls_channel(c);                // its rows are gone
 *
 * pfs_register_tls_channel returns NULL when the agent is off or the name is
 * empty or longer than 127 bytes. pfs_tls_channel_set returns 1 when the value
 * is shown, 0 otherwise (no channel, a property name empty or longer than 127
 * bytes, the table full: counted in tls_properties_lost). A value longer than
 * 1023 bytes is cut; a NULL value is empty. Calls on one channel are made one at a
 * time (as MySQL's channel serialises its context's changes). */
typedef struct pfs_tls_channel pfs_tls_channel;
PFS_C_FN(pfs_tls_channel*, pfs_register_tls_channel, (const char* name), NULL)
PFS_C_FN(int, pfs_tls_channel_set, (pfs_tls_channel* channel, const char* property, const char* value), 0)
PFS_C_VOID(pfs_unregister_tls_channel, (pfs_tls_channel* channel))

/* ---------------------------------------------------------------------------
 * Data locks (MySQL's psi_data_lock.h; the rows of data_locks and
 * data_lock_waits). A lock manager of the program (an engine's record and table
 * locks) publishes each lock while it exists, and which lock waits for which.
 * MySQL asks the engine at query time; here the reader is another process, so the
 * lock manager writes them as they change.
 *
 *   pfs_data_lock_desc d = {0};
 *   d.engine = "INNODB"; d.engine_lock_id = "140:5:4:2"; d.engine_transaction_id = 1047;
 *   d.object_schema = "shop"; d.object_name = "orders"; d.index_name = "PRIMARY";
 *   d.lock_type = "RECORD"; d.lock_mode = "X,REC_NOT_GAP"; d.lock_status = "WAITING";
 *   d.lock_data = "17";
 *   pfs_data_lock* l = pfs_data_lock_create(&d);      // NULL: not recorded
 *   pfs_data_lock_wait* w = pfs_data_lock_wait_create(l, holder);
 *   ... granted: pfs_data_lock_wait_destroy(w); pfs_data_lock_set_status(l, "GRANTED");
 *   pfs_data_lock_destroy(l);
 *
 * Texts: ENGINE up to 31 bytes, ENGINE_LOCK_ID 127, names 63, LOCK_TYPE, LOCK_MODE
 * and LOCK_STATUS 31; a longer one (or a NULL engine, lock id, type, mode or
 * status) makes the call return NULL and record nothing. LOCK_DATA is cut at 255
 * bytes (MySQL's column holds 8192). NULL or "" is SQL NULL for the nullable texts;
 * 0 is NULL for the transaction id. thread_id / event_id 0: the calling thread
 * and its event counter, as InnoDB reports a lock's owner (MySQL's
 * get_current_thread_event_id). object_instance NULL: the record's address.
 * A full table (PFS_MAX_DATA_LOCKS, PFS_MAX_DATA_LOCK_WAITS) returns NULL, counted
 * in data_locks_lost / data_lock_waits_lost; every call given NULL does nothing.
 * One thread at a time changes a given lock (the lock manager's own latch). */
typedef struct pfs_data_lock pfs_data_lock;           /* a row of data_locks */
typedef struct pfs_data_lock_wait pfs_data_lock_wait; /* a row of data_lock_waits */
typedef struct pfs_data_lock_desc {
  const char* engine;             /* ENGINE (required) */
  const char* engine_lock_id;     /* ENGINE_LOCK_ID (required) */
  uint64_t engine_transaction_id; /* 0 = NULL */
  uint64_t thread_id;             /* 0 = the calling thread */
  uint64_t event_id;              /* 0 = the calling thread's event counter */
  const char* object_schema;
  const char* object_name;
  const char* partition_name;
  const char* subpartition_name;
  const char* index_name;
  const void* object_instance; /* OBJECT_INSTANCE_BEGIN; NULL = the record's address */
  const char* lock_type;       /* 'TABLE', 'RECORD' (required) */
  const char* lock_mode;       /* 'S', 'X', 'IX', 'X,REC_NOT_GAP'... (required) */
  const char* lock_status;     /* 'GRANTED', 'WAITING' (required) */
  const char* lock_data;       /* cut at 255 bytes */
} pfs_data_lock_desc;
PFS_C_FN(pfs_data_lock*, pfs_data_lock_create, (const pfs_data_lock_desc* desc), NULL)
/* LOCK_STATUS becomes status (up to 31 bytes; NULL or longer: ignored). */
PFS_C_VOID(pfs_data_lock_set_status, (pfs_data_lock* lock, const char* status))
PFS_C_VOID(pfs_data_lock_destroy, (pfs_data_lock* lock))
/* requesting waits for blocking (both live locks of this process). */
PFS_C_FN(pfs_data_lock_wait*, pfs_data_lock_wait_create, (pfs_data_lock* requesting, pfs_data_lock* blocking), NULL)
PFS_C_VOID(pfs_data_lock_wait_destroy, (pfs_data_lock_wait* wait))

/* ---------------------------------------------------------------------------
 * Metadata locks (MySQL's psi_mdl.h): the program's own locks on named objects
 * (a table, a schema, a tenant...), one row of metadata_locks per lock requested,
 * from its request until its release. The time a request spends PENDING is a wait
 * of class wait/lock/metadata/sql/mdl (events_waits_*, every wait summary), whose
 * OBJECT_TYPE, OBJECT_SCHEMA and OBJECT_NAME are the lock's.
 *
 *   pfs_metadata_lock* l = pfs_create_metadata_lock(ticket, "TABLE", "shop", "orders",
 *       NULL, PFS_MDL_SHARED_READ, PFS_MDL_TRANSACTION, PFS_MDL_PENDING, __FILE__, __LINE__);
 *   pfs_wait_locker w;
 *   int rec = pfs_start_metadata_wait(&w, l, __FILE__, __LINE__);
 *   ... wait until the lock is granted ...
 *   if (rec) pfs_end_metadata_wait(&w, 0);
 *   pfs_set_metadata_lock_status(l, PFS_MDL_GRANTED);
 *   ... use the object ...
 *   pfs_destroy_metadata_lock(l);                          // released
 *
 * object_type: MySQL's words (GLOBAL, SCHEMA, TABLE, FUNCTION, PROCEDURE, TRIGGER,
 * EVENT, COMMIT, USER LEVEL LOCK, TABLESPACE, BACKUP LOCK, LOCKING SERVICE...) or
 * the program's own, under 32 bytes; schema, name and column under 64 bytes, NULL
 * for none. The handle is NULL when nothing is recorded: the agent is off, the
 * class is disabled, an argument is out of range, or the table is full (counted
 * in metadata_locks_lost); every call on a NULL handle does nothing. */
typedef struct pfs_metadata_lock pfs_metadata_lock;
/* LOCK_TYPE (MySQL's enum_mdl_type order) */
#define PFS_MDL_INTENTION_EXCLUSIVE 0
#define PFS_MDL_SHARED 1
#define PFS_MDL_SHARED_HIGH_PRIO 2
#define PFS_MDL_SHARED_READ 3
#define PFS_MDL_SHARED_WRITE 4
#define PFS_MDL_SHARED_WRITE_LOW_PRIO 5
#define PFS_MDL_SHARED_UPGRADABLE 6
#define PFS_MDL_SHARED_READ_ONLY 7
#define PFS_MDL_SHARED_NO_WRITE 8
#define PFS_MDL_SHARED_NO_READ_WRITE 9
#define PFS_MDL_EXCLUSIVE 10
/* LOCK_DURATION (enum_mdl_duration) */
#define PFS_MDL_STATEMENT 0
#define PFS_MDL_TRANSACTION 1
#define PFS_MDL_EXPLICIT 2
/* LOCK_STATUS */
#define PFS_MDL_PENDING 1
#define PFS_MDL_GRANTED 2
#define PFS_MDL_VICTIM 3
#define PFS_MDL_TIMEOUT 4
#define PFS_MDL_KILLED 5
#define PFS_MDL_PRE_ACQUIRE_NOTIFY 6
#define PFS_MDL_POST_RELEASE_NOTIFY 7
PFS_C_FN(pfs_metadata_lock*, pfs_create_metadata_lock,
         (const void* identity, const char* object_type, const char* schema, const char* name,
          const char* column, int lock_type, int duration, int status, const char* file, unsigned line),
         NULL)
PFS_C_VOID(pfs_set_metadata_lock_status, (pfs_metadata_lock* lock, int status))
PFS_C_VOID(pfs_destroy_metadata_lock, (pfs_metadata_lock* lock))
/* The PENDING part of a request: 1 if a wait is recorded (then end it). */
PFS_C_FN(int, pfs_start_metadata_wait,
         (pfs_wait_locker* locker, pfs_metadata_lock* lock, const char* file, unsigned line), 0)
PFS_C_VOID(pfs_end_metadata_wait, (pfs_wait_locker* locker, int rc))

/* ---------------------------------------------------------------------------
 * Units of work (MySQL's statements, stages and transactions). They belong to
 * the calling thread: each start is ended by the same thread. Waits of the thread
 * nest in its running stage, else its running statement; stages nest in the
 * statement; statements in the transaction (or the statement that contains
 * them). Calls out of order (an end without a start, a stage with no class) are
 * counted in the status row work_call_errors and otherwise ignored.
 *
 *   pfs_key q = pfs_register_statement("app", "request");   // statement/app/request
 *   pfs_key parse = pfs_register_stage("app", "parsing");   // stage/app/parsing
 *   int level = pfs_statement_start(q, "shop", __FILE__, __LINE__);
 *   if (level) pfs_statement_set_text(sql, strlen(sql));     // SQL_TEXT, DIGEST
 *   pfs_stage_start(parse, __FILE__, __LINE__);
 *   ...
 *   if (level) pfs_statement_set_rows(affected, sent, examined);
 *   pfs_statement_end(level);
 *
 * The set_* calls apply to the innermost running statement: call them only when
 * your start returned non-zero (a statement not recorded, because its class is
 * disabled or the stack is full, must not change the one around it). */
PFS_C_FN(pfs_key, pfs_register_stage, (const char* category, const char* name), 0)
PFS_C_FN(pfs_key, pfs_register_statement, (const char* category, const char* name), 0)

/* Statements. start returns the statement's stack level (1 for the outermost,
 * 2 inside it ...), or 0 when it is not recorded; pass it to pfs_statement_end,
 * which also ends statements left running inside it (counted as errors).
 * schema: CURRENT_SCHEMA (NULL for none). */
PFS_C_FN(int, pfs_statement_start, (pfs_key key, const char* schema, const char* file, unsigned line), 0)
/* SQL_TEXT (cut at PFS_MAX_SQL_TEXT_LENGTH); the agent computes DIGEST and
 * DIGEST_TEXT from it (literals replaced by '?'). */
PFS_C_VOID(pfs_statement_set_text, (const char* text, size_t length))
/* A text the program already normalized: DIGEST is its hash, DIGEST_TEXT the text. */
PFS_C_VOID(pfs_statement_set_digest_text, (const char* normalized, size_t length))
PFS_C_VOID(pfs_statement_set_rows, (uint64_t affected, uint64_t sent, uint64_t examined))
/* An error (ERRORS + 1) with its number, SQLSTATE and message (any may be 0/NULL). */
PFS_C_VOID(pfs_statement_set_error, (unsigned mysql_errno, const char* sqlstate, const char* message))
PFS_C_VOID(pfs_statement_add_warnings, (unsigned count))
/* The caller's W3C trace context, as the request carried it ("00-<32 hex trace id>-
 * <16 hex parent span id>-<2 hex flags>"): TRACE_ID and PARENT_SPAN_ID of the running
 * statement (beyond MySQL), so that exporters (pfs_otlp) put its spans in that trace
 * under that parent. An invalid traceparent is ignored (W3C: start a new trace). */
PFS_C_VOID(pfs_statement_set_traceparent, (const char* traceparent))
PFS_C_VOID(pfs_statement_end, (int level))

/* Stages: starting one ends the running one (MySQL's rule); the end of the
 * statement ends its stage. work: WORK_COMPLETED / WORK_ESTIMATED. */
/* Returns the stage's EVENT_ID (0 when it is not recorded). */
PFS_C_FN(uint64_t, pfs_stage_start, (pfs_key key, const char* file, unsigned line), 0)
PFS_C_VOID(pfs_stage_set_progress, (uint64_t completed, uint64_t estimated))
PFS_C_VOID(pfs_stage_end, (void))
/* Ends the running stage only if it is this one (scoped stages). */
PFS_C_VOID(pfs_stage_end_event, (uint64_t event_id))

/* Transactions: one running per thread. */
#define PFS_ISOLATION_READ_UNCOMMITTED 1
#define PFS_ISOLATION_READ_COMMITTED 2
#define PFS_ISOLATION_REPEATABLE_READ 3
#define PFS_ISOLATION_SERIALIZABLE 4
PFS_C_FN(int, pfs_transaction_start,
         (int read_only, int isolation, int autocommit, const char* file, unsigned line), 0)
PFS_C_VOID(pfs_transaction_set_gtid, (const char* gtid))
PFS_C_VOID(pfs_transaction_set_trx_id, (uint64_t trx_id))
PFS_C_VOID(pfs_transaction_set_xid, (long format_id, const char* gtrid, const char* bqual))
/* The same for the running transaction (pfs_statement_set_traceparent). */
PFS_C_VOID(pfs_transaction_set_traceparent, (const char* traceparent))
#define PFS_SAVEPOINT 1
#define PFS_ROLLBACK_TO_SAVEPOINT 2
#define PFS_RELEASE_SAVEPOINT 3
PFS_C_VOID(pfs_transaction_savepoint, (int kind))
PFS_C_VOID(pfs_transaction_end, (int committed))

/* Idle: a thread waiting for work between requests (a wait named "idle"). */
PFS_C_FN(int, pfs_start_idle_wait, (pfs_wait_locker* locker, const char* file, unsigned line), 0)
PFS_C_VOID(pfs_end_idle_wait, (pfs_wait_locker* locker))

/* threads.PROCESSLIST_ID and CONNECTION_TYPE of the calling thread (a connection
 * or session id of the program's own). */
#define PFS_CONNECTION_TCP 1
#define PFS_CONNECTION_SOCKET 2
#define PFS_CONNECTION_PIPE 3
#define PFS_CONNECTION_SSL 4
#define PFS_CONNECTION_SHARED_MEMORY 5
PFS_C_VOID(pfs_set_thread_connection, (uint64_t processlist_id, int connection_type))

/* Threads. A thread that never registers gets a record (thread/pfs/unregistered)
 * on its first event. Registering gives it a class and a name; an actor (user,
 * host, role) makes it a foreground thread matched against setup_actors. */
PFS_C_VOID(pfs_register_current_thread, (pfs_key thread_class, const char* name))
PFS_C_VOID(pfs_set_thread_actor, (const char* user, const char* host, const char* role))
PFS_C_FN(uint64_t, pfs_current_thread_id, (void), 0) /* THREAD_ID, 0 if none */
PFS_C_VOID(pfs_unregister_current_thread, (void))
/* threads.PARENT_THREAD_ID (MySQL's PSI spawn_thread). pfs_spawn_thread is
 * pthread_create that records the calling thread as the new thread's parent. Code
 * that creates threads its own way passes pfs_current_thread_id() of the creating
 * thread to pfs_set_thread_parent, called first thing in the new thread. */
PFS_C_FN(int, pfs_spawn_thread,
         (pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg),
         pthread_create(thread, attr, start, arg))
PFS_C_VOID(pfs_set_thread_parent, (uint64_t parent_thread_id))

/* Plugin unload (MySQL's PSI system service, unload_plugin). A plugin's instruments
 * are the classes whose category is its name (wait/synch/mutex/<plugin>/...). Call
 * pfs_unload_plugin(name) before dlclose: the mutex, rwlock, cond, file, socket and
 * table instances of those classes that still exist leave their tables, their
 * statistics folded into the class summaries as their own destroy would fold them;
 * the classes stay (their names are copies), and the plugin loaded again registers
 * the same classes. Returns the number of instances that went. */
PFS_C_FN(unsigned, pfs_unload_plugin, (const char* plugin_name), 0)

/* ---------------------------------------------------------------------------
 * The program's own metrics (MySQL 8.4's telemetry meters and metrics: tables
 * setup_meters and setup_metrics). A meter is a named group with an export
 * FREQUENCY in seconds (0: MySQL's default, 10) and ENABLED; a metric of a meter
 * is a counter, an up-down counter or a gauge of integers or doubles, with a unit
 * and a description. Registering a name again returns the same handle.
 *
 *   pfs_meter m = pfs_register_meter("shop", "the shop's numbers", 0);
 *   pfs_metric orders = pfs_register_metric(m, "orders", PFS_METRIC_COUNTER,
 *                                           PFS_METRIC_INTEGER, "{order}", "orders taken");
 *   pfs_metric_add(orders, 1);   // one relaxed load and store in the thread's own cell
 *
 * pfs_metric_add adds to an integer counter or up-down counter (a counter ignores a
 * negative delta) and pfs_metric_set sets an integer gauge (or, from its callback,
 * an observed metric); the _double forms do the same for DOUBLE metrics. A call of
 * the wrong kind does nothing. Updates count whether the meter is ENABLED or not:
 * ENABLED and FREQUENCY say what is exported and when callbacks run.
 *
 * An observed metric (PFS_METRIC_ASYNC_*) is read by a callback that the agent calls
 * from its meter thread every FREQUENCY seconds while the meter is ENABLED, never
 * on the program's threads and never under a lock of the agent; the callback calls
 * pfs_metric_set / pfs_metric_set_double with the metric it is given.
 * pfs_unregister_observer stops the calls (when it returns, no call is running), so
 * that the callback's data may go. A handle of 0 (agent off, a name too long, the
 * table full: counted as meters_lost / metrics_lost) makes every call do nothing. */
typedef uint32_t pfs_meter;  /* 1-based meter; 0 = none */
typedef uint32_t pfs_metric; /* a metric (its index and kind); 0 = none */
typedef void (*pfs_observe_fn)(pfs_metric metric, void* arg);
#define PFS_METRIC_COUNTER 1              /* "COUNTER" */
#define PFS_METRIC_UPDOWN_COUNTER 2       /* "UPDOWN COUNTER" */
#define PFS_METRIC_GAUGE 3                /* "GAUGE COUNTER" */
#define PFS_METRIC_ASYNC_COUNTER 4        /* "ASYNC COUNTER" (MySQL 8.4) */
#define PFS_METRIC_ASYNC_UPDOWN_COUNTER 5 /* "ASYNC UPDOWN COUNTER" */
#define PFS_METRIC_ASYNC_GAUGE 6          /* "ASYNC GAUGE COUNTER" */
#define PFS_METRIC_INTEGER 1
#define PFS_METRIC_DOUBLE 2
PFS_C_FN(pfs_meter, pfs_register_meter, (const char* name, const char* description, unsigned frequency), 0)
PFS_C_FN(pfs_metric, pfs_register_metric,
         (pfs_meter meter, const char* name, int type, int num_type, const char* unit, const char* description),
         0)
PFS_C_FN(pfs_metric, pfs_register_observed_metric,
         (pfs_meter meter, const char* name, int type, int num_type, const char* unit, const char* description,
          pfs_observe_fn callback, void* arg),
         0)
PFS_C_VOID(pfs_unregister_observer, (pfs_metric metric))
PFS_C_VOID(pfs_metric_add, (pfs_metric metric, int64_t delta))
PFS_C_VOID(pfs_metric_add_double, (pfs_metric metric, double delta))
PFS_C_VOID(pfs_metric_set, (pfs_metric metric, int64_t value))
PFS_C_VOID(pfs_metric_set_double, (pfs_metric metric, double value))
/* For inline updates (the C++ API's, pfs_meter.h): the 1-based index of a metric
 * is the low 24 bits of its handle, and pfs_metric_gauge_cell gives the cell a gauge
 * stores its value in (int64_t or the bits of a double, in the region, which stays
 * mapped as long as the process runs); NULL for a metric that is not a gauge. */
#define PFS_METRIC_INDEX(metric) ((metric) & 0x00FFFFFFu)
PFS_C_FN(uint64_t*, pfs_metric_gauge_cell, (pfs_metric metric), NULL)

/* clang-format on */
#if defined(PFS_NO_INSTRUMENTATION) && defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#undef PFS_C_FN
#undef PFS_C_VOID

#ifdef __cplusplus
}
#endif

#endif /* PFS_C_H */

// OPERATION of a wait (wait_record::operation): the ids stored in a region and their
// text in MySQL's words. Part of the region layout (region_layout.h).
#pragma once

#include <cstdint>

namespace pfs::layout {

// OPERATION values (wait_record::operation); names in the reader use MySQL's words.
enum operation_id : std::uint8_t {
  kOpNone = 0,
  kOpLock,          // mutex "lock"
  kOpTryLock,       // "try_lock"
  kOpReadLock,      // rwlock "read_lock"
  kOpWriteLock,     // "write_lock"
  kOpTryReadLock,   // "try_read_lock"
  kOpTryWriteLock,  // "try_write_lock"
  kOpWait,          // cond "wait"
  kOpTimedWait,     // "timed_wait"
  kOpFileCreate,    // file io: create, open, close, read, write, seek, tell,
  kOpFileOpen,      //   flush, stat, chsize, delete, rename, sync
  kOpFileClose,
  kOpFileRead,
  kOpFileWrite,
  kOpFileSeek,
  kOpFileTell,
  kOpFileFlush,
  kOpFileStat,
  kOpFileChsize,
  kOpFileDelete,
  kOpFileRename,
  kOpFileSync,
  kOpTableFetch,  // table io: fetch, insert, update, delete
  kOpTableInsert,
  kOpTableUpdate,
  kOpTableDelete,
  kOpIdle,  // "idle"
  // Socket io (layout 4), MySQL's PSI_socket_operation in its order: create, connect
  // (accept too, as MySQL), bind, close, send, recv, sendto, recvfrom, sendmsg,
  // recvmsg, seek, opt, stat, shutdown, select.
  kOpSocketCreate,
  kOpSocketConnect,
  kOpSocketBind,
  kOpSocketClose,
  kOpSocketSend,
  kOpSocketRecv,
  kOpSocketSendTo,
  kOpSocketRecvFrom,
  kOpSocketSendMsg,
  kOpSocketRecvMsg,
  kOpSocketSeek,
  kOpSocketOpt,
  kOpSocketStat,
  kOpSocketShutdown,
  kOpSocketSelect,
  // Layout 6: a metadata lock wait ("metadata lock"), and table lock waits in
  // MySQL's table_lock_operation_map order (lock_layout.h's table_lock_kind).
  kOpMetadataLock,
  kOpTableLockFirst,
  kOpTableLockLast = kOpTableLockFirst + 9,
  kOpTryWait,  // semaphore "try_wait" (sem_trywait; MySQL's try_ names)
  kOpCount,
};

// OPERATION text of an operation_id in MySQL's words; nullptr when unknown.
inline const char* operation_name(std::uint32_t op) {
  constexpr const char* kNames[kOpCount] = {nullptr,
                                            "lock",
                                            "try_lock",
                                            "read_lock",
                                            "write_lock",
                                            "try_read_lock",
                                            "try_write_lock",
                                            "wait",
                                            "timed_wait",
                                            "create",
                                            "open",
                                            "close",
                                            "read",
                                            "write",
                                            "seek",
                                            "tell",
                                            "flush",
                                            "stat",
                                            "chsize",
                                            "delete",
                                            "rename",
                                            "sync",
                                            "fetch",
                                            "insert",
                                            "update",
                                            "delete",
                                            "idle",
                                            "create",
                                            "connect",
                                            "bind",
                                            "close",
                                            "send",
                                            "recv",
                                            "sendto",
                                            "recvfrom",
                                            "sendmsg",
                                            "recvmsg",
                                            "seek",
                                            "opt",
                                            "stat",
                                            "shutdown",
                                            "select",
                                            "metadata lock",
                                            "read normal",
                                            "read with shared locks",
                                            "read high priority",
                                            "read no insert",
                                            "write allow write",
                                            "write concurrent insert",
                                            "write low priority",
                                            "write normal",
                                            "read external",
                                            "write external",
                                            "try_wait"};
  return op < kOpCount ? kNames[op] : nullptr;
}

}  // namespace pfs::layout

// The records of io instrumentation (layout 6): file io (file_instances and the
// file summaries), socket io (socket_instances and the socket summaries) and table
// io (table shares, their indexes and setup_objects). The lock word of each record
// follows the pfs_lock rules of region_layout.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/region/region_layout.h"

namespace pfs::layout {

// ---------------------------------------------------------------------------
// File io (wait/io/file/...)

// One group of file_summary_* columns: COUNT, SUM/MIN/MAX_TIMER (ps) and, for
// READ and WRITE, SUM_NUMBER_OF_BYTES. Updated with atomic adds (several threads
// may do io on one file at once). min is UINT64_MAX while nothing was timed.
struct io_stat {
  std::uint64_t count;
  std::uint64_t sum;
  std::uint64_t min;
  std::uint64_t max;
  std::uint64_t bytes;
  std::uint64_t sum_hi;  // carries of sum (wide_sum.h; layout 4)
};
struct io_stats {
  io_stat read;
  io_stat write;
  io_stat misc;  // create, open, close, seek, tell, flush, stat, chsize, delete, rename, sync
};

// file_instances rows (and their summaries). A file stays (OPEN_COUNT 0) after
// its last close, as in MySQL, until it is deleted. A freed record keeps its
// name and version until reused, so older events still name their file.
struct file_instance {
  std::uint32_t lock;         // version+state; the version is bumped on allocation only
  std::uint32_t class_index;  // 1-based, kind file
  std::uint32_t open_count;
  std::uint32_t name_seq;  // seqlock of name alone (odd while a rename writes it)
  std::uint64_t identity;  // OBJECT_INSTANCE_BEGIN
  io_stats stats;
  char name[kObjectNameLen];  // FILE_NAME (as given to open)
};

// ---------------------------------------------------------------------------
// Socket io (wait/io/socket/...), layout 4

inline constexpr std::size_t kSocketIpLen = 64;   // IP text (INET6_ADDRSTRLEN is 46)
inline constexpr std::uint8_t kSocketActive = 0;  // STATE 'ACTIVE' (MySQL's state of a new socket)
inline constexpr std::uint8_t kSocketIdle = 1;    // 'IDLE': the program said it waits for a request

// socket_instances rows (and their summaries): one per open socket descriptor,
// freed at its close (its statistics then go to its class's bucket in
// kArrayClassIo, which socket classes share with file classes: one index per
// class). A freed record keeps its address and version until reused, so older
// events still name it.
struct socket_instance {
  std::uint32_t lock;         // version+state; the version is bumped on allocation only
  std::uint32_t class_index;  // 1-based, kind socket
  std::uint64_t identity;     // OBJECT_INSTANCE_BEGIN
  std::uint64_t thread_id;    // THREAD_ID of the owner thread; 0 = NULL
  std::int32_t fd;            // SOCKET_ID
  std::uint32_t port;         // PORT (0: none, or a unix socket)
  std::uint32_t addr_seq;     // seqlock of ip and port (odd while bind/connect rewrites them)
  std::uint8_t state;         // kSocketActive / kSocketIdle
  std::uint8_t pad[3];
  io_stats stats;         // read: recv, recvfrom, recvmsg; write: send, sendto, sendmsg; misc: the rest
  char ip[kSocketIpLen];  // IP: the peer's, or the local address of a bound socket; '' for unix sockets
};

// ---------------------------------------------------------------------------
// Table io (wait/io/table/...), WL#4895

inline constexpr std::uint8_t kObjectTypeTable = 1;           // 'TABLE'
inline constexpr std::uint8_t kObjectTypeTemporaryTable = 2;  // 'TEMPORARY TABLE'
inline constexpr std::size_t kIndexNameLen = 64;
inline constexpr std::size_t kTableNameLen = 64;

// table_io_waits_summary_* groups; READ = FETCH, WRITE = INSERT + UPDATE + DELETE.
// COUNT counts rows (a batch of n rows counts n), SUM/MIN/MAX time events.
struct table_io_stat {
  wait_stat fetch;
  wait_stat insert;
  wait_stat update;
  wait_stat del;
};

struct table_share {
  std::uint32_t lock;         // version+state
  std::uint32_t class_index;  // 1-based, kind table (wait/io/table/<category>/handler)
  std::uint8_t object_type;   // kObjectType*
  std::uint8_t derived;       // kFlagEnabled|kFlagTimed from setup_objects (recomputed by setup writers)
  std::uint8_t pad[2];
  std::uint32_t index_count;  // declared indexes (<= max_indexes_per_table)
  std::uint64_t identity;     // OBJECT_INSTANCE_BEGIN of its events
  table_io_stat no_index;     // io that used no index (INDEX_NAME NULL)
  char schema[kObjectSchemaLen];
  char name[kTableNameLen];
};

// Per-index statistics: table t's index i is at [t * max_indexes_per_table + i].
struct index_stat {
  table_io_stat stat;
  char name[kIndexNameLen];
};

// setup_objects rows. object_type uses MySQL's words: 'TABLE' is the only type
// this product records (temporary tables match 'TABLE' rows, as in MySQL).
inline constexpr std::uint8_t kSetupObjectTable = 1;
struct object_record {
  std::uint32_t lock;  // version+state
  std::uint8_t object_type;
  std::uint8_t enabled;
  std::uint8_t timed;
  std::uint8_t pad;
  char schema[kObjectSchemaLen];
  char name[kTableNameLen];
};

}  // namespace pfs::layout

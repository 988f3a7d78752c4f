// Locks the program keeps itself (layout 6): metadata locks, data locks and table
// locks, as MySQL 8.0 records them (psi_mdl.h, psi_data_lock.h, psi_table.h).
//
// - metadata_lock_record (kArrayMetadataLocks): one per lock a thread requested on
//   a named object, from its request (PENDING) until its release; the rows of
//   metadata_locks. The time a request spends PENDING is a wait of class
//   wait/lock/metadata/sql/mdl whose object (kObjectMetadata) is the record.
// - data_lock_record (kArrayDataLocks) and data_lock_wait_record
//   (kArrayDataLockWaits): the locks of the program's own lock manager and which
//   lock waits for which; the rows of data_locks and data_lock_waits. MySQL's
//   engines answer those tables through an inspector at query time; here the
//   reader is another process, so the program writes them as they change.
// - table_lock_stat (kArrayTableLockStats, one per table share): the lock waits of
//   table_lock_waits_summary_by_table, by MySQL's lock kinds.
//
// Records with a lock word follow the pfs_lock rules of region_layout.h: a writer
// marks the record dirty, writes it, then allocated (release); readers copy and
// check the word again. Fields that change while a record is allocated (a status,
// an owner) are single words stored with release and read relaxed.
#pragma once

#include <cstdint>
#include <type_traits>

#include "agent/region/region_layout.h"

namespace pfs::layout {

// ---------------------------------------------------------------------------
// Metadata locks (metadata_locks; MySQL's MDL_key, enum_mdl_type,
// enum_mdl_duration, PFS's LOCK_STATUS words)

inline constexpr std::size_t kMdlObjectTypeLen =
    32;                                         // OBJECT_TYPE varchar(64): MySQL's words or the program's
inline constexpr std::size_t kMdlNameLen = 64;  // OBJECT_SCHEMA, OBJECT_NAME, COLUMN_NAME varchar(64)

// LOCK_TYPE, in MySQL's enum_mdl_type order.
enum mdl_type : std::uint8_t {
  kMdlIntentionExclusive = 0,
  kMdlShared,
  kMdlSharedHighPrio,
  kMdlSharedRead,
  kMdlSharedWrite,
  kMdlSharedWriteLowPrio,
  kMdlSharedUpgradable,
  kMdlSharedReadOnly,
  kMdlSharedNoWrite,
  kMdlSharedNoReadWrite,
  kMdlExclusive,
  kMdlTypeCount,
};
inline const char* mdl_type_name(std::uint32_t t) {
  constexpr const char* kNames[kMdlTypeCount] = {
      "INTENTION_EXCLUSIVE",  "SHARED",           "SHARED_HIGH_PRIO",
      "SHARED_READ",          "SHARED_WRITE",     "SHARED_WRITE_LOW_PRIO",
      "SHARED_UPGRADABLE",    "SHARED_READ_ONLY", "SHARED_NO_WRITE",
      "SHARED_NO_READ_WRITE", "EXCLUSIVE"};
  return t < kMdlTypeCount ? kNames[t] : nullptr;
}

// LOCK_DURATION (enum_mdl_duration).
enum mdl_duration : std::uint8_t {
  kMdlStatement = 0,
  kMdlTransaction,
  kMdlExplicit,
  kMdlDurationCount,
};
inline const char* mdl_duration_name(std::uint32_t d) {
  constexpr const char* kNames[kMdlDurationCount] = {"STATEMENT", "TRANSACTION", "EXPLICIT"};
  return d < kMdlDurationCount ? kNames[d] : nullptr;
}

// LOCK_STATUS (MySQL's PFS metadata lock statuses; 1-based so that 0 is "none").
enum mdl_status : std::uint8_t {
  kMdlStatusNone = 0,
  kMdlPending = 1,
  kMdlGranted,
  kMdlVictim,
  kMdlTimeout,
  kMdlKilled,
  kMdlPreAcquireNotify,
  kMdlPostReleaseNotify,
  kMdlStatusCount,
};
inline const char* mdl_status_name(std::uint32_t s) {
  constexpr const char* kNames[kMdlStatusCount] = {nullptr,
                                                   "PENDING",
                                                   "GRANTED",
                                                   "VICTIM",
                                                   "TIMEOUT",
                                                   "KILLED",
                                                   "PRE_ACQUIRE_NOTIFY",
                                                   "POST_RELEASE_NOTIFY"};
  return s < kMdlStatusCount ? kNames[s] : nullptr;
}

// A row of metadata_locks. The lock word's version is bumped when the record is
// taken, so a wait (object_index, object_version) names it only during that life.
struct metadata_lock_record {
  std::uint32_t lock;      // version+state
  std::uint8_t lock_type;  // mdl_type
  std::uint8_t duration;   // mdl_duration
  std::uint8_t status;     // mdl_status (changes while allocated: release store)
  std::uint8_t pad0;
  std::uint64_t identity;         // OBJECT_INSTANCE_BEGIN
  std::uint64_t owner_thread_id;  // OWNER_THREAD_ID; 0 = NULL
  std::uint64_t owner_event_id;   // OWNER_EVENT_ID; 0 = NULL
  std::uint32_t source_index;     // SOURCE (1-based into sources); 0 = NULL
  std::uint32_t pad1;
  char object_type[kMdlObjectTypeLen];  // OBJECT_TYPE
  char object_schema[kMdlNameLen];      // '' = NULL
  char object_name[kMdlNameLen];        // '' = NULL
  char column_name[kMdlNameLen];        // '' = NULL
};

// ---------------------------------------------------------------------------
// Data locks (data_locks, data_lock_waits)

inline constexpr std::size_t kDataLockEngineLen = 32;  // ENGINE varchar(32)
inline constexpr std::size_t kDataLockIdLen = 128;     // ENGINE_LOCK_ID varchar(128)
inline constexpr std::size_t kDataLockNameLen = 64;    // schema, object, partition, index varchar(64)
inline constexpr std::size_t kDataLockWordLen = 32;    // LOCK_TYPE, LOCK_MODE, LOCK_STATUS varchar(32)
inline constexpr std::size_t kDataLockDataLen = 256;   // LOCK_DATA (MySQL's varchar(8192), cut here)

// A row of data_locks. The texts are written while the record is dirty; status
// (LOCK_STATUS) may change while it is allocated, under the record's own seq
// (odd while rewritten).
struct data_lock_record {
  std::uint32_t lock;            // version+state
  std::uint32_t seq;             // seqlock of status alone
  std::uint64_t transaction_id;  // ENGINE_TRANSACTION_ID; 0 = NULL
  std::uint64_t thread_id;       // THREAD_ID; 0 = NULL
  std::uint64_t event_id;        // EVENT_ID; 0 = NULL
  std::uint64_t identity;        // OBJECT_INSTANCE_BEGIN
  char engine[kDataLockEngineLen];
  char engine_lock_id[kDataLockIdLen];
  char object_schema[kDataLockNameLen];  // '' = NULL
  char object_name[kDataLockNameLen];
  char partition_name[kDataLockNameLen];
  char subpartition_name[kDataLockNameLen];
  char index_name[kDataLockNameLen];
  char lock_type[kDataLockWordLen];    // 'TABLE', 'RECORD', or the program's word
  char lock_mode[kDataLockWordLen];    // 'S', 'X', 'IX', 'X,REC_NOT_GAP'...
  char lock_status[kDataLockWordLen];  // 'GRANTED', 'WAITING'
  char lock_data[kDataLockDataLen];    // '' = NULL
};

// A row of data_lock_waits: the requesting lock waits for the blocking one. Both
// are data_lock_record indexes (1-based) with the lock word's version each had
// when the wait was published; a wait whose lock is gone or reused is not shown.
struct data_lock_wait_record {
  std::uint32_t lock;  // version+state
  std::uint32_t requesting_index;
  std::uint32_t requesting_version;
  std::uint32_t blocking_index;
  std::uint32_t blocking_version;
  std::uint32_t pad;
};

// ---------------------------------------------------------------------------
// Table locks (table_lock_waits_summary_by_table; MySQL's PFS_TL_LOCK_TYPE and
// PFS_TL_EXTERNAL, in its order)

enum table_lock_kind : std::uint8_t {
  kTableLockRead = 0,  // READ_NORMAL
  kTableLockReadWithSharedLocks,
  kTableLockReadHighPriority,
  kTableLockReadNoInsert,
  kTableLockWriteAllowWrite,
  kTableLockWriteConcurrentInsert,
  kTableLockWriteLowPriority,
  kTableLockWrite,  // WRITE_NORMAL
  kTableLockReadExternal,
  kTableLockWriteExternal,
  kTableLockKinds,
};

// One per table share (same index as kArrayTables): its lock waits by kind, and
// the class of its lock waits (wait/lock/table/<category>/handler, 1-based).
struct table_lock_stat {
  std::uint32_t class_index;
  std::uint32_t pad;
  wait_stat kinds[kTableLockKinds];
};

static_assert(sizeof(metadata_lock_record) == 264);
static_assert(sizeof(data_lock_record) % 8 == 0);
static_assert(sizeof(data_lock_wait_record) == 24);
static_assert(sizeof(table_lock_stat) == 8 + kTableLockKinds * sizeof(wait_stat));
static_assert(std::is_trivially_copyable_v<metadata_lock_record> &&
              std::is_standard_layout_v<data_lock_record>);

}  // namespace pfs::layout

// pfs_fixture: writes a region file with deterministic content (for the FDW's
// pg_regress suite and benchmark), or a deliberately broken one.
//
//   pfs_fixture [options] PATH
//     --kind=KIND              good (default), bad-magic, bad-version (newer), old-version, too-small,
//                              truncated, array-past-end, inconsistent, garbage
//     --history-long-rows=N    history_long holds N generated completed waits instead
//                              of the standard content's rows (benchmarks)
//     --mode=OCTAL             file mode (default 0644: readable by the postgres user)
//     --pid=N                  the pid in the header (default 4242: several fixtures in one
//                              region directory need their own)
//
// The standard content: 9 instrument classes, 3 threads, running and completed waits
// in the stacks, history rings (one wrapped), history_long (with a file read and a
// table fetch), per-thread and per-instance statistics, sources, setup_actors rows,
// lost counters, two files, a table with two indexes, setup_objects rows, declared
// errors and their counts, the table's lock waits, TLS channels' properties, data locks
// and their waits, metadata locks, the program's meters and metrics. Timers: the
// NANOSECOND converter maps raw value r to (r - 1000) * 1000 picoseconds, so raw times
// below are chosen to give exact picoseconds. pid and creation time are fixed values.
//
// Every record is written through the layout structs, with allocated version+state
// words and even seqlock words, as a provider leaves them between writes. The tool
// exits after writing, so the region's provider is not alive.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "agent/region/account_layout.h"
#include "agent/region/error_layout.h"
#include "agent/region/io_layout.h"
#include "agent/region/lock_layout.h"
#include "agent/region/meter_layout.h"
#include "agent/region/region.h"
#include "agent/region/region_builder.h"
#include "agent/region/region_layout.h"
#include "agent/region/tls_layout.h"
#include "timers/timer.h"

namespace {

using namespace pfs;
using namespace pfs::layout;

constexpr std::uint64_t kNoMin = UINT64_MAX;
constexpr std::uint8_t kNanosecond = static_cast<std::uint8_t>(timers::timer_kind::nanosecond);
constexpr std::uint64_t kRawBase = 1000;  // NANOSECOND baseline

// Raw NANOSECOND value that converts to `ns` nanoseconds after the baseline.
constexpr std::uint64_t raw_ns(std::uint64_t ns) { return kRawBase + ns; }

// Class indexes of the standard content (1-based).
enum : std::uint32_t {
  kQueueLock = 1,
  kCacheLock,
  kCacheRw,
  kQueueNotEmpty,
  kMainThread,
  kWorkerThread,
  kIdleLock,
  kLogFile,
  kOrdersTable,
};

struct options {
  std::string path;
  std::string kind = "good";
  long long history_long_rows = -1;  // -1: the standard rows
  unsigned mode = 0644;
  std::uint64_t pid = 4242;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "pfs_fixture: %s\n"
               "usage: pfs_fixture [--kind=KIND] [--history-long-rows=N] [--mode=OCTAL] [--pid=N] PATH\n"
               "kinds: good bad-magic bad-version old-version too-small truncated array-past-end "
               "inconsistent garbage\n"
               "       huge-sums (good, with sums of times beyond 2^63 and 2^64 ps)\n",
               why);
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&](std::string_view prefix) { return argv[i] + prefix.size(); };  // NUL-terminated
    if (a.starts_with("--kind=")) {
      o.kind = value("--kind=");
    } else if (a.starts_with("--history-long-rows=")) {
      char* end = nullptr;
      o.history_long_rows = std::strtoll(value("--history-long-rows="), &end, 10);
      if (*end != '\0' || o.history_long_rows < 0 || o.history_long_rows > 10000000) usage("bad row count");
    } else if (a.starts_with("--pid=")) {
      char* end = nullptr;
      o.pid = std::strtoull(value("--pid="), &end, 10);
      if (*end != '\0' || o.pid == 0) usage("bad pid");
    } else if (a.starts_with("--mode=")) {
      o.mode = static_cast<unsigned>(std::strtoul(value("--mode="), nullptr, 8));
    } else if (a.starts_with("--")) {
      usage("unrecognized option");
    } else if (o.path.empty()) {
      o.path = a;
    } else {
      usage("more than one path");
    }
  }
  if (o.path.empty()) usage("no path");
  return o;
}

void copy_name(char* field, std::size_t cap, std::string_view s) {
  std::memset(field, 0, cap);
  std::memcpy(field, s.data(), s.size() < cap ? s.size() : cap - 1);
}

template <std::size_t N>
void copy_name(char (&field)[N], std::string_view s) {
  copy_name(field, N, s);
}

// Writes records into a freshly created region.
class writer {
 public:
  writer(region_map& m, std::uint64_t pid) : m_(m), h_(m.header()), pid_(pid) {}

  void header() {
    h_.pid = pid_;
    h_.creation_time_ns = 1700000000000000000ull;
    for (auto& t : h_.timers) t = {};
    h_.timers[kNanosecond] = {kRawBase, 1000, 0, 1, 1e9};
    // MICROSECOND and MILLISECOND too (performance_timers shows the provider's
    // timers); CYCLE stays unavailable, as on a machine without a usable TSC.
    h_.timers[static_cast<int>(timers::timer_kind::microsecond)] = {kRawBase, 1000000, 0, 1, 1e6};
    h_.timers[static_cast<int>(timers::timer_kind::millisecond)] = {kRawBase, 1000000000, 0, 1, 1e3};
    h_.wait_timer = kNanosecond;
    for (std::uint32_t c = 0; c < kConsumerCount; ++c) h_.consumers[c] = 1;
    h_.consumers[kConsumerWaitsSummaryByInstance] = 0;
    h_.setup_generation = 3;
    h_.next_thread_id = 4;
    h_.lost[kLostLocker] = 3;
    h_.lost[kLostMutexInstances] = 1;
  }

  void classes() {
    set_class(kQueueLock, kKindMutex, "wait/synch/mutex/app/queue_lock", kFlagEnabled | kFlagTimed,
              {2, 3000000, 1000000, 2000000, 0});
    set_class(kCacheLock, kKindMutex, "wait/synch/mutex/app/cache_lock", kFlagEnabled | kFlagTimed);
    set_class(kCacheRw, kKindRwlock, "wait/synch/rwlock/app/cache_rw", kFlagEnabled);
    set_class(kQueueNotEmpty, kKindCond, "wait/synch/cond/app/queue_not_empty", kFlagEnabled | kFlagTimed);
    set_class(kMainThread, kKindThread, "thread/app/main", kFlagEnabled);
    set_class(kWorkerThread, kKindThread, "thread/app/worker", kFlagEnabled);
    set_class(kIdleLock, kKindMutex, "wait/synch/mutex/app/idle_lock", 0);
    set_class(kLogFile, kKindFile, "wait/io/file/app/log", kFlagEnabled | kFlagTimed);
    set_class(kOrdersTable, kKindTable, "wait/io/table/sql/handler", kFlagEnabled | kFlagTimed,
              {38, 0, kNoMin, 0, 0});
  }

  // huge-sums: sums of times beyond bigint (2^63 ps) and beyond 64 bits (2^64 ps),
  // as 10^6 cumulative days of waits leave them: queue_lock's first instance
  // 2^64 + 5 ps, the log file's first file reads 2^63 + 1 ps, shop.orders' fetches
  // without index 2 * 2^64 ps.
  void huge_sums() {
    sync_instance& m1 = m_.array<sync_instance>(kArrayMutexes)[0];
    m1.stat.sum = 5;
    m1.stat.sum_hi = 1;
    file_instance& log = m_.array<file_instance>(kArrayFiles)[0];
    log.stats.read.sum = (std::uint64_t{1} << 63) + 1;
    table_share& t = m_.array<table_share>(kArrayTables)[0];
    t.no_index.fetch.sum = 0;
    t.no_index.fetch.sum_hi = 2;
    // The global summary's and the files' rows by instance count them too.
    b_.count_instances_in_global(0);
  }

  // File io: two files of the log class, and the class's bucket of a deleted file.
  void files() {
    file_instance& log = set_file(0, "/var/log/app.log", 0x6000, 1);
    log.stats.read = {2, 3000000, 1000000, 2000000, 8192, 0};
    log.stats.write = {3, 9000000, 2000000, 4000000, 1536, 0};
    log.stats.misc = {1, 500000, 500000, 500000, 0, 0};
    file_instance& old = set_file(1, "/var/log/app.log.1", 0x7000, 0);
    old.stats.read = {1, 1000000, 1000000, 1000000, 4096, 0};
    old.stats.misc = {2, 300000, 100000, 200000, 0, 0};
    io_stats& deleted = m_.array<io_stats>(kArrayClassIo)[kLogFile - 1];
    deleted = zero_io();
    deleted.write = {1, 1000000, 1000000, 1000000, 100, 0};
  }

  // Table io: shop.orders with two indexes, and setup_objects rows.
  void tables() {
    table_share& t = b_.set_table(0, kOrdersTable, kObjectTypeTable, "shop", "orders", 0x8000);
    t.no_index.fetch = {10, 5000000, 200000, 900000, 0};
    t.no_index.insert = {2, 3000000, 1000000, 2000000, 0};
    b_.set_index(0, 0, "PRIMARY").stat.fetch = {20, 4000000, 100000, 400000, 0};
    index_stat& customer = b_.set_index(0, 1, "idx_customer");
    customer.stat.fetch = {5, 2500000, 300000, 700000, 0};
    customer.stat.update = {1, 1500000, 1500000, 1500000, 0};

    set_object(0, "%", "%", true, true);
    set_object(1, "shop", "orders", true, false);
  }

  // Table locks: shop.orders' lock waits by kind (table_lock_waits_summary_by_table).
  // Its lock class is not among the fixture's classes (class_index 0): the table
  // shows the share's statistics whatever the class.
  void table_locks() {
    table_lock_stat& l = m_.array<table_lock_stat>(kArrayTableLockStats)[0];
    for (wait_stat& k : l.kinds) k = {0, 0, kNoMin, 0, 0};
    l.kinds[kTableLockRead] = {3, 3000000, 500000, 1500000, 0};
    l.kinds[kTableLockReadExternal] = {1, 700000, 700000, 700000, 0};
    l.kinds[kTableLockWrite] = {2, 5000000, 2000000, 3000000, 0};
    l.kinds[kTableLockWriteConcurrentInsert] = {4, 2000000, 100000, 900000, 0};
    l.kinds[kTableLockWriteExternal] = {1, 400000, 400000, 400000, 0};
  }

  void threads() {
    thread_record& t1 = set_thread(0, kMainThread, 1);
    t1.os_thread_id = 5001;
    thread_record& t2 = set_thread(1, kWorkerThread, 2);
    t2.os_thread_id = 5002;
    t2.parent_thread_id = 1;
    t2.foreground = 1;
    copy_name(t2.name, "worker-1");
    copy_name(t2.user, "alice");
    copy_name(t2.host, "localhost");
    copy_name(t2.role, "app");
    thread_record& t3 = set_thread(2, kWorkerThread, 3);
    t3.os_thread_id = 5003;
    t3.parent_thread_id = 1;
    t3.instrumented = 0;
    t3.history = 0;
  }

  void sources() {
    set_source(1, "queue.cpp:42", kSourceReady);
    set_source(2, "cache.cpp:17", kSourceReady);
    set_source(3, "half_written.cpp:1", kSourceWriting);
    set_source(4, "queue.cpp:42", kSourceReady);  // the same site interned twice (two threads at once)
  }

  // events_waits_current: thread 1 is waiting for queue_lock (running) inside a
  // completed cond wait; thread 2's last wait completed; thread 3 has none.
  void stacks() {
    const std::uint64_t depth = h_.wait_stack_depth;
    wait_record& outer = wait(kArrayWaitStacks, 0 * depth + 0, 1, 10, kQueueNotEmpty, kOpTimedWait);
    outer.end_event_id = 10;
    outer.timer_start = raw_ns(100000);
    outer.timer_end = raw_ns(160000);
    wait_record& inner = wait(kArrayWaitStacks, 0 * depth + 1, 1, 11, kQueueLock, kOpLock);
    inner.state = kWaitRunning;
    inner.end_event_id = 0;
    inner.timer_start = raw_ns(170000);
    inner.timer_end = 0;
    inner.nesting_event_id = 10;
    inner.nesting_type = kNestingWait;
    wait_record& w2 = wait(kArrayWaitStacks, 1 * depth + 0, 2, 7, kCacheRw, kOpReadLock);
    w2.timer = 0;  // cache_rw is not timed: NULL times
    w2.source_index = 2;
  }

  // events_waits_history: thread 1 has 3 events (ring not full); thread 2 has
  // written 6 events into its ring of 4 (oldest shown first: events 3..6).
  void history() {
    const std::uint64_t per = h_.history_per_thread;
    for (std::uint64_t e = 1; e <= 3; ++e) {
      wait_record& w = wait(kArrayWaitHistory, 0 * per + (e - 1), 1, e, kQueueLock, kOpLock);
      w.timer_start = raw_ns(e * 10000);
      w.timer_end = raw_ns(e * 10000 + e * 1500);
    }
    thread(0).history_index = 3;
    thread(0).event_id = 12;
    for (std::uint64_t e = 1; e <= 6; ++e) {
      const bool rw = e % 2 == 0;
      wait_record& w = wait(kArrayWaitHistory, 1 * per + (e - 1) % per, 2, e, rw ? kCacheRw : kCacheLock,
                            rw ? kOpWriteLock : kOpTryLock);
      w.source_index = 2;
      if (rw) {
        w.timer = 0;
      } else {
        w.timer_start = raw_ns(e * 20000);
        w.timer_end = raw_ns(e * 20000 + 2500);
      }
    }
    thread(1).history_index = 6;
    thread(1).event_id = 8;
    thread(2).event_id = 3;  // thread 3's file read and table fetch (history_long) are events 1 and 2
  }

  // events_waits_history_long: 6 completed waits, then a running one (not shown)
  // and an empty slot.
  void history_long_standard() {
    const struct {
      std::uint64_t tid, event;
      std::uint32_t cls;
      std::uint8_t op;
      std::uint64_t start_ns, wait_ns;
    } rows[] = {
        {1, 1, kQueueLock, kOpLock, 10000, 1500},    {1, 2, kQueueLock, kOpLock, 20000, 3000},
        {2, 1, kCacheLock, kOpTryLock, 20000, 2500}, {1, 3, kQueueLock, kOpLock, 30000, 4500},
        {2, 3, kCacheLock, kOpTryLock, 60000, 2500}, {1, 10, kQueueNotEmpty, kOpTimedWait, 100000, 60000},
    };
    std::uint64_t slot = 0;
    for (const auto& r : rows) {
      wait_record& w = wait(kArrayHistoryLong, slot++, r.tid, r.event, r.cls, r.op);
      w.source_index = r.cls == kCacheLock ? 2 : 1;
      w.timer_start = raw_ns(r.start_ns);
      w.timer_end = raw_ns(r.start_ns + r.wait_ns);
    }
    // Thread 1's second lock waited for thread 3 (its event 5); its condition wait
    // was ended by thread 2's signal.
    m_.array<wait_record>(kArrayHistoryLong)[1].blocking_thread_id = 3;
    m_.array<wait_record>(kArrayHistoryLong)[1].blocking_event_id = 5;
    m_.array<wait_record>(kArrayHistoryLong)[5].blocking_thread_id = 2;
    wait_record& running = wait(kArrayHistoryLong, slot++, 1, 11, kQueueLock, kOpLock);
    running.state = kWaitRunning;
    wait_record& read = wait(kArrayHistoryLong, slot++, 3, 1, kLogFile, kOpFileRead);
    read.timer_start = raw_ns(200000);
    read.timer_end = raw_ns(202000);
    read.number_of_bytes = 4096;
    read.object_kind = kObjectFile;
    read.object_index = 1;
    read.object_version = kVersionInc;
    read.object_instance_begin = 0x6000;
    wait_record& fetch = wait(kArrayHistoryLong, slot++, 3, 2, kOrdersTable, kOpTableFetch);
    fetch.timer_start = raw_ns(210000);
    fetch.timer_end = raw_ns(210400);
    fetch.object_kind = kObjectTable;
    fetch.object_index = 1;
    fetch.object_version = kVersionInc;
    fetch.index_number = 2;
    fetch.object_instance_begin = 0x8000;
    claimed_history_long(slot);
  }

  // The provider's counter of claimed history_long batches (the readers' row estimate).
  void claimed_history_long(std::uint64_t slots) {
    const std::uint64_t batch = h_.history_long_batch == 0 ? 1 : h_.history_long_batch;
    h_.history_long_next_batch = (slots + batch - 1) / batch;
  }

  // events_waits_history_long full of n generated completed waits (benchmark):
  // threads 1..3 round robin, classes queue_lock/cache_lock/cache_rw/cond/log file
  // in turn (one wait in five is file io).
  void history_long_generated(std::uint64_t n) {
    static constexpr std::uint32_t kClasses[] = {kQueueLock, kCacheLock, kCacheRw, kQueueNotEmpty, kLogFile};
    static constexpr std::uint8_t kOps[] = {kOpLock, kOpTryLock, kOpWriteLock, kOpWait, kOpFileRead};
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t k = i % 5;
      wait_record& w = wait(kArrayHistoryLong, i, 1 + i % 3, 1 + i / 3, kClasses[k], kOps[k]);
      w.timer_start = raw_ns(i * 1000);
      w.timer_end = raw_ns(i * 1000 + 100 + (i * 7919) % 900);
      w.source_index = 1 + static_cast<std::uint32_t>(i % 2);
      w.object_instance_begin = 0x1000 * (k + 1);
      if (kClasses[k] == kLogFile) {
        w.number_of_bytes = 4096;
        w.object_kind = kObjectFile;
        w.object_index = 1;
        w.object_version = kVersionInc;
      }
    }
    claimed_history_long(n);
  }

  void instances() {
    sync_instance& m1 = set_sync(kArrayMutexes, 0, kQueueLock, 0x1000, {3, 6000000, 1000000, 3000000, 0});
    m1.owner_thread_id = 2;
    set_sync(kArrayMutexes, 1, kCacheLock, 0x2000, {4, 10000000, 2500000, 2500000, 0});
    set_sync(kArrayMutexes, 2, kIdleLock, 0x5000, {0, 0, kNoMin, 0, 0});
    sync_instance& rw = set_sync(kArrayRwlocks, 0, kCacheRw, 0x3000, {3, 0, kNoMin, 0, 0});
    rw.readers = 2;
    set_sync(kArrayConds, 0, kQueueNotEmpty, 0x4000, {1, 60000000, 60000000, 60000000, 0});
    // lock_contention_by_instance: queue_lock's waits behind queue.cpp:42, in two
    // entries of one key (two waiters claimed it at once) and one of the same site
    // interned twice (source 4): shown as one row;
    // cache_rw's waits behind readers (no source); an entry of an earlier life of
    // cache_lock's slot (another incarnation: not shown).
    auto* c = m_.array<contention_record>(kArrayLockContention);
    c[0] = {contention_key(kContentionMutex, 1, 1), m1.lock, 0, {2, 5000000, 2000000, 3000000, 0}, {}};
    c[3] = {contention_key(kContentionMutex, 1, 1), m1.lock, 0, {1, 1000000, 1000000, 1000000, 0}, {}};
    c[5] = {contention_key(kContentionRwlock, 1, 0), rw.lock, 0, {1, 4000000, 4000000, 4000000, 0}, {}};
    c[7] = {contention_key(kContentionMutex, 1, 4), m1.lock, 0, {1, 500000, 500000, 500000, 0}, {}};
    c[6] = {contention_key(kContentionMutex, 2, 2), m1.lock + kVersionInc, 0, {9, 9, 1, 1, 0}, {}};
  }

  // events_waits_summary_by_thread_by_event_name: a few non-zero cells.
  void thread_stats() {
    stat(1, kQueueLock) = {3, 9000000, 1500000, 4500000, 0};
    stat(1, kQueueNotEmpty) = {1, 60000000, 60000000, 60000000, 0};
    stat(2, kCacheLock) = {3, 7500000, 2500000, 2500000, 0};
    stat(2, kCacheRw) = {3, 0, kNoMin, 0, 0};
    for (std::uint32_t t = 0; t < h_.max_threads; ++t)
      for (std::uint32_t c = 1; c <= h_.max_classes; ++c)
        if (stat(t + 1, c).count == 0) stat(t + 1, c).min = kNoMin;
    // events_waits_summary_global_by_event_name: thread slot 0 counted what the
    // instances and files counted (every summary consumer on).
    b_.count_instances_in_global(0);
  }

  // Errors: ER_KEY_NOT_FOUND and ER_LOCK_DEADLOCK declared (a third record still
  // unpublished); thread 1 raised 1032 three times and handled it once, thread 2
  // raised 1032 twice, 1213 once and four errors never declared (the NULL row);
  // threads that exited left 1032 raised 10 times and handled 5 times in the
  // global part. Times are seconds since the epoch (2023-11-14 22:13:20 UTC is
  // 1700000000).
  void errors() {
    auto* records = m_.array<error_record>(kArrayErrors);
    const auto declare = [](error_record& r, std::int32_t number, const char* name, const char* state) {
      r.number = number;
      std::snprintf(r.name, sizeof r.name, "%s", name);
      std::snprintf(r.sql_state, sizeof r.sql_state, "%s", state);
      r.lock = kVersionInc | kStateAllocated;
    };
    declare(records[0], 1032, "ER_KEY_NOT_FOUND", "HY000");
    declare(records[1], 1213, "ER_LOCK_DEADLOCK", "40001");
    records[2].number = 9999;  // being declared: not shown
    const std::uint64_t per = h_.max_errors + 1;
    auto* rows = m_.array<error_stat>(kArrayThreadErrorStats);
    rows[0 * per + 1] = {3, 1, 1700000000, 1700000100};
    rows[1 * per + 1] = {2, 0, 1700000040, 1700000060};
    rows[1 * per + 2] = {1, 0, 1700000070, 1700000070};
    rows[1 * per + 0] = {4, 0, 1700000010, 1700000090};
    m_.array<error_stat>(kArrayClassErrorStats)[1] = {10, 5, 1699990000, 1700000050};
  }

  // Accounts, users and hosts (holders 1-3 accounts, 4-5 users, 6-7 hosts): threads
  // 1 and 3 belong to the NULL account, thread 2 to alice@localhost. Threads of
  // alice@localhost that exited left 5 queue_lock waits (10 us, from 1 to 4 us) and
  // ER_LOCK_DEADLOCK raised twice; a TRUNCATE of the accounts left user alice one
  // cache_lock wait of 1 us. alice@localhost: 1 connection now, 3 in all.
  void accounts() {
    auto* h = m_.array<account_record>(kArrayAccounts);
    const auto holder = [&](std::uint32_t slot, holder_kind kind, const char* user, const char* host,
                            std::int64_t current, std::uint64_t total) {
      account_record& r = h[slot - 1];
      r.kind = kind;
      std::snprintf(r.user, sizeof r.user, "%s", user);
      std::snprintf(r.host, sizeof r.host, "%s", host);
      r.current_connections = current;
      r.total_connections = total;
      r.lock = kVersionInc | kStateAllocated;
      return &r;
    };
    account_record* alice = holder(1, kHolderAccount, "alice", "localhost", 1, 3);
    alice->user_slot = 4;
    alice->host_slot = 6;
    alice->max_controlled_memory = 4096;
    alice->max_total_memory = 8192;
    account_record* background = holder(2, kHolderAccount, "", "", 2, 2);
    background->user_slot = 5;
    background->host_slot = 7;
    holder(4, kHolderUser, "alice", "", 1, 3);
    holder(5, kHolderUser, "", "", 2, 2);
    holder(6, kHolderHost, "", "localhost", 1, 3);
    holder(7, kHolderHost, "", "", 2, 2);
    const std::uint32_t slots[3][3] = {{2, 5, 7}, {1, 4, 6}, {2, 5, 7}};
    for (std::uint32_t t = 0; t < 3; ++t) {
      thread(t).account_slot = slots[t][0];
      thread(t).user_slot = slots[t][1];
      thread(t).host_slot = slots[t][2];
    }
    auto* waits = m_.array<wait_stat>(kArrayAccountWaitStats);
    for (std::uint64_t i = 0; i < m_.count(kArrayAccountWaitStats); ++i) waits[i].min = kNoMin;
    waits[0 * h_.max_classes + (kQueueLock - 1)] = {5, 10000000, 1000000, 4000000, 0};
    waits[3 * h_.max_classes + (kCacheLock - 1)] = {1, 1000000, 1000000, 1000000, 0};
    m_.array<error_stat>(kArrayAccountErrorStats)[0 * (h_.max_errors + 1) + 2] = {2, 0, 1700000001,
                                                                                  1700000002};
  }

  // The program's metrics: meters shop (FREQUENCY 10) and pool (5, disabled), a
  // third being declared (not shown); metrics whose VALUE is the record's value
  // plus the cells of the live threads (slots 0..2): orders 100 + 7 + 5 = 112
  // (slot 3 is free: its 1000 is not counted), revenue 10.25 + 2.5 = 12.75,
  // open_carts -3 + 5 = 2, the gauges load 0.5 and queue 42 (their cells are not
  // added); a sixth metric being declared. Two metrics were declared beyond the array.
  void meters() {
    auto* meters = m_.array<meter_record>(kArrayMeters);
    const auto meter = [](meter_record& r, const char* name, std::uint32_t frequency, bool enabled,
                          const char* description) {
      copy_name(r.name, name);
      copy_name(r.description, description);
      r.frequency = frequency;
      r.enabled = enabled ? 1 : 0;
      r.lock = kVersionInc | kStateAllocated;
    };
    meter(meters[0], "shop", 10, true, "the shop's numbers");
    meter(meters[1], "pool", 5, false, "the worker pool");
    copy_name(meters[2].name, "unpublished");
    auto* metrics = m_.array<metric_record>(kArrayMetrics);
    const auto metric = [](metric_record& r, std::uint32_t meter_index, const char* name, std::uint8_t type,
                           std::uint8_t num, std::uint64_t value, const char* unit, const char* description) {
      r.meter_index = meter_index;
      copy_name(r.name, name);
      copy_name(r.unit, unit);
      copy_name(r.description, description);
      r.type = type;
      r.num_type = num;
      r.value = value;
      r.lock = kVersionInc | kStateAllocated;
    };
    const auto bits = [](double d) { return std::bit_cast<std::uint64_t>(d); };
    metric(metrics[0], 1, "orders", kMetricCounter, kMetricInteger, 100, "{order}", "orders taken");
    metric(metrics[1], 1, "revenue", kMetricCounter, kMetricDouble, bits(10.25), "EUR", "money taken");
    metric(metrics[2], 1, "open_carts", kMetricUpdownCounter, kMetricInteger, static_cast<std::uint64_t>(-3),
           "{cart}", "carts not checked out");
    metric(metrics[3], 2, "load", kMetricGauge, kMetricDouble, bits(0.5), "1", "share of the workers busy");
    metric(metrics[4], 2, "queue", kMetricAsyncGauge, kMetricInteger, 42, "{job}", "jobs waiting");
    copy_name(metrics[5].name, "unpublished");
    const std::uint64_t per = h_.max_metrics;
    auto* cells = m_.array<std::uint64_t>(kArrayThreadMetricValues);
    cells[0 * per + 0] = 7;
    cells[1 * per + 0] = 5;
    cells[3 * per + 0] = 1000;  // a free slot
    cells[1 * per + 1] = bits(2.5);
    cells[0 * per + 2] = 5;
    cells[2 * per + 3] = bits(9.0);  // a gauge's cell: not added
    h_.lost[kLostMetrics] = 2;
  }

  // TLS channels: mysql_main (channel 1) with three properties in records 1..3,
  // mysql_admin (channel 2, registered after it) with one in record 0, so the rows
  // read in registration order, not record order; record 4 is being taken (dirty:
  // not shown).
  void tls() {
    auto* records = m_.array<tls_property_record>(kArrayTlsProperties);
    const auto put = [](tls_property_record& r, std::uint64_t channel_id, const char* channel,
                        const char* property, const char* value) {
      r.channel_id = channel_id;
      std::snprintf(r.channel, sizeof r.channel, "%s", channel);
      std::snprintf(r.property, sizeof r.property, "%s", property);
      std::snprintf(r.value, sizeof r.value, "%s", value);
      r.value_seq = 4;
      r.lock = kVersionInc | kStateAllocated;
    };
    put(records[0], 2, "mysql_admin", "Ssl_accepts", "0");
    put(records[1], 1, "mysql_main", "Ssl_accepts", "12");
    put(records[2], 1, "mysql_main", "Current_tls_version", "TLSv1.2,TLSv1.3");
    put(records[3], 1, "mysql_main", "Ssl_server_not_after", "Jan  1 00:00:00 2036 GMT");
    put(records[4], 1, "mysql_main", "Ssl_finished_accepts", "11");
    records[4].lock = kVersionInc | kStateDirty;
  }

  // Data locks: transaction 1047 (thread 1) holds a table lock and row 17 of
  // shop.orders (partition p0, subpartition p0sp0); transaction 1048 (thread 2)
  // holds the table and waits for the row; a fourth record is being written and a
  // fifth was freed (neither shown). Of the three waits only the first names live
  // locks: the second's blocking lock is the freed one, the third names the row
  // lock with an older version (the record since reused).
  void data_locks() {
    auto* locks = m_.array<data_lock_record>(kArrayDataLocks);
    const auto lock = [](data_lock_record& r, std::uint64_t trx, std::uint64_t thread, std::uint64_t event,
                         std::uint64_t identity, const char* id, const char* type, const char* mode,
                         const char* status, const char* data) {
      r.transaction_id = trx;
      r.thread_id = thread;
      r.event_id = event;
      r.identity = identity;
      copy_name(r.engine, "INNODB");
      copy_name(r.engine_lock_id, id);
      copy_name(r.object_schema, "shop");
      copy_name(r.object_name, "orders");
      copy_name(r.lock_type, type);
      copy_name(r.lock_mode, mode);
      copy_name(r.lock_status, status);
      if (data != nullptr) copy_name(r.lock_data, data);
      if (std::string_view(type) == "RECORD") {
        copy_name(r.partition_name, "p0");
        copy_name(r.subpartition_name, "p0sp0");
        copy_name(r.index_name, "PRIMARY");
      }
      r.lock = kVersionInc | kStateAllocated;
    };
    lock(locks[0], 1047, 1, 12, 0x7f0000001000, "1047:1:table", "TABLE", "IX", "GRANTED", nullptr);
    lock(locks[1], 1047, 1, 12, 0x7f0000001100, "1047:1:4:17", "RECORD", "X,REC_NOT_GAP", "GRANTED", "17");
    lock(locks[2], 1048, 2, 30, 0x7f0000002000, "1048:1:table", "TABLE", "IX", "GRANTED", nullptr);
    lock(locks[3], 1048, 2, 31, 0x7f0000002100, "1048:1:4:17", "RECORD", "X,REC_NOT_GAP", "WAITING", "17");
    locks[1].lock = 2 * kVersionInc | kStateAllocated;  // the row lock's record was used once before
    lock(locks[4], 1049, 3, 5, 0x7f0000003000, "1049:1:table", "TABLE", "IS", "GRANTED", nullptr);
    locks[4].lock = kVersionInc | kStateDirty;  // being written
    copy_name(locks[5].engine_lock_id, "1040:1:table");
    locks[5].lock = kVersionInc | kStateFree;  // freed
    auto* waits = m_.array<data_lock_wait_record>(kArrayDataLockWaits);
    waits[0] = {kVersionInc | kStateAllocated, 4, kVersionInc, 2, 2 * kVersionInc, 0};
    waits[1] = {kVersionInc | kStateAllocated, 4, kVersionInc, 6, kVersionInc, 0};
    waits[2] = {kVersionInc | kStateAllocated, 4, kVersionInc, 2, kVersionInc, 0};
  }

  // Metadata locks: thread 2 holds EXCLUSIVE on TABLE shop.orders, thread 3 waits
  // PENDING for SHARED_READ on it; a program's own TENANT lock, with a column and
  // no owner, was chosen as a deadlock VICTIM; the fourth record is free.
  void metadata_locks() {
    auto* records = m_.array<metadata_lock_record>(kArrayMetadataLocks);
    if (records == nullptr) return;  // cannot happen: the sizes ask for 4
    const auto lock = [](metadata_lock_record& r, const char* type, const char* schema, const char* name,
                         const char* column, std::uint8_t lock_type, std::uint8_t duration,
                         std::uint8_t status, std::uint64_t identity, std::uint64_t thread,
                         std::uint64_t event, std::uint32_t source) {
      std::snprintf(r.object_type, sizeof r.object_type, "%s", type);
      std::snprintf(r.object_schema, sizeof r.object_schema, "%s", schema);
      std::snprintf(r.object_name, sizeof r.object_name, "%s", name);
      std::snprintf(r.column_name, sizeof r.column_name, "%s", column);
      r.lock_type = lock_type;
      r.duration = duration;
      r.status = status;
      r.identity = identity;
      r.owner_thread_id = thread;
      r.owner_event_id = event;
      r.source_index = source;
      r.lock = kVersionInc | kStateAllocated;
    };
    lock(records[0], "TABLE", "shop", "orders", "", kMdlExclusive, kMdlTransaction, kMdlGranted, 0x1000, 2, 7,
         2);
    lock(records[1], "TABLE", "shop", "orders", "", kMdlSharedRead, kMdlTransaction, kMdlPending, 0x2000, 3,
         12, 1);
    lock(records[2], "TENANT", "", "acme", "quota", kMdlSharedUpgradable, kMdlExplicit, kMdlVictim, 0x3000, 0,
         0, 0);
  }

  void actors() {
    set_actor(0, "%", "%", "%", true, true);
    set_actor(1, "localhost", "alice", "%", true, false);
    set_actor(2, "localhost", "zo\u00eb", "\u65e5\u672c", false, false);  // "zoë", "日本": not all LATIN1
  }

  thread_record& thread(std::uint32_t slot) { return m_.array<thread_record>(kArrayThreads)[slot]; }

 private:
  void set_class(std::uint32_t index, std::uint8_t kind, const char* name, std::uint8_t flags,
                 wait_stat s = region_builder::kNoWait) {
    b_.set_class(index, kind, name, flags, s);
  }

  thread_record& set_thread(std::uint32_t slot, std::uint32_t class_index, std::uint64_t tid) {
    return b_.set_thread(slot, class_index, tid);
  }

  wait_record& wait(array_id arr, std::uint64_t slot, std::uint64_t tid, std::uint64_t event,
                    std::uint32_t cls, std::uint8_t op) {
    wait_record& w = b_.wait_slot(arr, slot);
    w.state = kWaitCompleted;
    w.timer = kNanosecond;
    w.operation = op;
    w.class_index = cls;
    w.source_index = 1;
    w.thread_id = tid;
    w.event_id = event;
    w.end_event_id = event;
    w.object_instance_begin = 0x1000 * cls;
    w.number_of_bytes = -1;
    return w;
  }

  sync_instance& set_sync(array_id arr, std::uint32_t slot, std::uint32_t cls, std::uint64_t identity,
                          wait_stat s) {
    return b_.set_sync(arr, slot, cls, identity, s);
  }

  static io_stats zero_io() { return region_builder::kNoIoStats; }
  static table_io_stat zero_table_io() { return region_builder::kNoTableIo; }

  file_instance& set_file(std::uint32_t slot, const char* name, std::uint64_t identity,
                          std::uint32_t open_count) {
    return b_.set_file(slot, kLogFile, name, identity, open_count);
  }

  void set_object(std::uint32_t slot, const char* schema, const char* name, bool enabled, bool timed) {
    b_.set_object(slot, schema, name, enabled, timed);
  }

  wait_stat& stat(std::uint64_t tid, std::uint32_t cls) {
    return m_.array<wait_stat>(kArrayThreadClassStats)[(tid - 1) * h_.max_classes + (cls - 1)];
  }

  void set_source(std::uint32_t index, const char* text, std::uint32_t state) {
    b_.set_source(index, text, state);
  }

  void set_actor(std::uint32_t slot, const char* host, const char* user, const char* role, bool enabled,
                 bool history) {
    b_.set_actor(slot, host, user, role, enabled, history);
  }

  region_map& m_;
  region_header& h_;
  std::uint64_t pid_;
  region_builder b_{m_};
};

// Garbage inside the arrays (the header and geometry stay valid):
// - rows the reader must refuse: a history_long wait of class 999, a cond instance
//   of class 0 (the FDW fails the scans of their tables);
// - fields the reader shows sanitized: a history wait with an unknown operation,
//   a negative byte count, a source and a timer out of range; a class name with
//   invalid UTF-8; a thread of a class that does not exist; an owner id above
//   INT64_MAX;
// - a record left half-written (odd seqlock word): skipped as torn.
void add_garbage(region_map& m) {
  region_header& h = m.header();
  auto* hl = m.array<wait_record>(kArrayHistoryLong);
  hl[6] = hl[0];
  hl[6].class_index = 999;
  hl[6].event_id = 99;

  auto* history = m.array<wait_record>(kArrayWaitHistory);
  wait_record& odd = history[0 * h.history_per_thread + 3];
  odd = history[0];
  odd.event_id = odd.end_event_id = 4;
  odd.operation = 200;
  odd.number_of_bytes = -5;
  odd.source_index = 77777;
  odd.timer = 9;
  auto* threads = m.array<thread_record>(kArrayThreads);
  threads[0].history_index = 4;
  threads[2].class_index = 500;

  auto* conds = m.array<sync_instance>(kArrayConds);
  conds[1] = conds[0];
  conds[1].class_index = 0;
  conds[1].identity = 0x4100;
  m.array<sync_instance>(kArrayMutexes)[2].owner_thread_id = UINT64_MAX;

  m.array<class_record>(kArrayClasses)[kIdleLock - 1].name[20] = '\xff';
  m.array<wait_record>(kArrayWaitStacks)[1 * h.wait_stack_depth + 1].seq = 3;
}

void corrupt_file(const options& o, region_map& m) {
  region_header& h = m.header();
  if (o.kind == "bad-magic") {
    std::memcpy(h.magic, "NOTAREGN", 8);
  } else if (o.kind == "bad-version") {
    h.layout_version = 99;  // newer than any reader knows
  } else if (o.kind == "old-version") {
    h.layout_version = 2;
  } else if (o.kind == "array-past-end") {
    h.arrays[kArrayHistoryLong].offset = m.size() - 2 * sizeof(wait_record);
  } else if (o.kind == "inconsistent") {
    h.max_threads = h.max_threads + 1;
  } else if (o.kind == "garbage") {
    add_garbage(m);
  }
}

int truncate_to(const std::string& path, off_t size) {
  if (truncate(path.c_str(), size) != 0) {
    std::fprintf(stderr, "pfs_fixture: could not truncate \"%s\": %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  static constexpr std::string_view kKinds[] = {"good",      "bad-magic", "bad-version",    "old-version",
                                                "too-small", "truncated", "array-past-end", "inconsistent",
                                                "garbage",   "huge-sums"};
  bool known = false;
  for (auto k : kKinds) known = known || k == o.kind;
  if (!known) usage("unrecognized kind");

  region_sizes s;
  s.max_classes = 16;
  s.max_threads = 4;
  s.wait_stack_depth = 3;
  s.history_per_thread = 4;
  s.history_long_size = o.history_long_rows > 10 ? static_cast<std::uint32_t>(o.history_long_rows) : 10;
  s.max_mutexes = 4;
  s.max_rwlocks = 2;
  s.max_conds = 2;
  s.setup_actors_size = 3;
  s.max_sources = 4;
  s.max_files = 2;
  s.max_tables = 2;
  s.max_indexes_per_table = 2;
  s.setup_objects_size = 2;
  s.lock_contention_size = 8;
  s.max_errors = 3;
  s.max_tls_properties = 6;
  s.max_data_locks = 6;
  s.max_data_lock_waits = 3;
  s.max_metadata_locks = 4;
  s.max_accounts = 3;
  s.max_users = 2;
  s.max_hosts = 2;
  s.max_meters = 3;
  s.max_metrics = 6;

  region_error err;  // create replaces an earlier file, unless a live provider owns it
  region_map m = region_map::create(o.path, s, o.mode, err);
  if (err) {
    std::fprintf(stderr, "pfs_fixture: %s\n", err.message.c_str());
    return 1;
  }
  writer w(m, o.pid);
  w.header();
  w.classes();
  w.threads();
  w.sources();
  w.stacks();
  w.history();
  if (o.history_long_rows >= 0)
    w.history_long_generated(static_cast<std::uint64_t>(o.history_long_rows));
  else
    w.history_long_standard();
  w.instances();
  w.files();
  w.tables();
  w.table_locks();
  w.thread_stats();
  w.actors();
  w.errors();
  w.accounts();
  w.tls();
  w.data_locks();
  w.metadata_locks();
  w.meters();
  if (o.kind == "huge-sums") w.huge_sums();
  corrupt_file(o, m);
  const auto size = static_cast<off_t>(m.size());
  m = region_map();  // unmap, close: the alive lock goes with it

  if (o.kind == "too-small") return truncate_to(o.path, 100);
  if (o.kind == "truncated") return truncate_to(o.path, size / 2);
  return 0;
}

// What a forked child's region holds (issue 41), and how the child makes the copy
// its own: the copy is sparse (region_map::move_to_copy) and the child touches only
// the pages it copied, so a child costs about what its fork costs.
//
// Copied, where the parent's file holds data (its region is sparse too, and
// region_map::data_map lists its data with lseek SEEK_DATA): the header; what the child
// inherits (classes, setup, instances, files, sockets, tables, errors, locks, TLS
// properties, memory, meters and metrics) and the class-level summaries it resets; of the per-thread
// arrays only the forking thread's slot. Not copied (holes: zeros, which is their
// reset state, as in a new region): every history and long history, the other
// threads' slots, digests, the global statement histogram, the class wait
// histograms, lock contention and the class error summaries. The resets then run
// over the copied ranges only: a record that starts in a hole is free and zero. Runs in the fork child
// handler: system calls and plain stores, no allocation.
#include "agent/provider/internal/fork_child_region.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "agent/provider/internal/trace.h"
#include "agent/region/io_layout.h"
#include "agent/region/lock_layout.h"
#include "agent/region/memory_layout.h"
#include "agent/region/meter_layout.h"
#include "agent/region/setup.h"
#include "agent/region/work_layout.h"

namespace pfs::detail {
namespace {

using byte_range = region_map::byte_range;

// The classes whose wait histograms the other threads' release folded into (a
// hole in the child's file otherwise): zeroed after (static: no allocation here).
std::uint64_t g_folded_classes[kMaxClassesLimit / 64];

// Inherited, or class-level and reset: copied where the parent has data.
constexpr array_id kCopied[] = {
    kArrayClasses,
    kArrayThreads,
    kArrayMutexes,
    kArrayRwlocks,
    kArrayConds,
    kArraySems,
    kArraySetupActors,
    kArraySources,
    kArrayFiles,
    kArrayClassIo,
    kArrayTables,
    kArrayTableIndexes,
    kArraySetupObjects,
    kArrayClassStageStats,
    kArrayClassStatementStats,
    kArrayClassTransactionStats,
    kArrayWaitHistograms,
    kArrayFileWaitStats,
    kArraySockets,
    kArraySocketWaitStats,
    kArrayThreadMemoryStats,
    kArrayClassMemoryStats,
    kArrayErrors,
    kArrayMetadataLocks,
    kArrayDataLocks,
    kArrayDataLockWaits,
    kArrayTableLockStats,
    kArrayTlsProperties,
    kArrayMeters,
    kArrayMetrics,
};
// Per-thread arrays of which the forking thread's slot is copied (the other slots
// are free in the child; a thread that registers there initializes its slot).
constexpr array_id kForkingSlot[] = {
    kArrayWaitStacks,           kArrayThreadClassStats,       kArrayStageCurrent,
    kArrayStatementCurrent,     kArrayTransactionCurrent,     kArrayThreadStageStats,
    kArrayThreadStatementStats, kArrayThreadTransactionStats, kArrayThreadGlobalStats,
};

void zero(wait_stat& s) { zero_stat(s); }
void zero(io_stats& s) {
  reset_io(s.read);
  reset_io(s.write);
  reset_io(s.misc);
}
void zero(table_io_stat& s) {
  zero_stat(s.fetch);
  zero_stat(s.insert);
  zero_stat(s.update);
  zero_stat(s.del);
}
void zero(statement_stat& s) {
  zero_stat(s.time);
  for (std::uint64_t* f : {&s.lock_time, &s.errors, &s.warnings, &s.rows_affected, &s.rows_sent,
                           &s.rows_examined, &s.cpu_time, &s.lock_time_hi, &s.cpu_time_hi})
    store_relaxed(*f, std::uint64_t{0});
}
void zero(transaction_stat& s) {
  zero_stat(s.all);
  zero_stat(s.read_write);
  zero_stat(s.read_only);
}
void zero(wait_histogram& h) {
  for (std::uint64_t& c : h.counts) store_relaxed(c, std::uint64_t{0});
}

// The ranges the child's file holds (what was copied).
struct copied_ranges {
  const byte_range* ranges;
  std::size_t n;
};

// f(record, index) for every record of the array that starts in a copied range.
template <class T, class F>
void each_copied(const region_map& r, const copied_ranges& c, array_id id, F&& f) {
  T* records = r.array<T>(id);
  const std::uint64_t count = r.count(id);
  if (records == nullptr || count == 0) return;
  const auto first = static_cast<std::uint64_t>(reinterpret_cast<const char*>(records) -
                                                static_cast<const char*>(static_cast<void*>(&r.header())));
  const std::uint64_t stride = sizeof(T);
  const std::uint64_t end = first + count * stride;
  for (std::size_t k = 0; k < c.n; ++k) {
    const std::uint64_t lo = c.ranges[k].offset, hi = lo + c.ranges[k].length;
    if (hi <= first || lo >= end) continue;
    const std::uint64_t from = lo > first ? lo - first : 0, to = hi - first;
    for (std::uint64_t i = (from + stride - 1) / stride; i < count && i * stride < to; ++i) f(records[i], i);
  }
}

template <class T>
void zero_copied(const region_map& r, const copied_ranges& c, array_id id) {
  each_copied<T>(r, c, id, [](T& s, std::uint64_t) { zero(s); });
}

// The forking thread's slice of a per-thread array of statistics.
template <class T>
void zero_slot(const region_map& r, array_id id, std::uint32_t slot) {
  const std::uint64_t threads = r.count(kArrayThreads), per = threads == 0 ? 0 : r.count(id) / threads;
  T* a = r.array<T>(id);
  for (std::uint64_t i = 0; a != nullptr && i < per; ++i) zero(a[std::uint64_t{slot} * per + i]);
}

// The summaries, as TRUNCATE of each leaves them (setup::reset_*), over the copied
// pages and the forking thread's slot.
void reset_summaries(const region_map& r, const copied_ranges& c, const thread_context* me) {
  // events_waits_summary_* (by instance, by class, global), with files, sockets, tables.
  for (array_id id : {kArrayMutexes, kArrayRwlocks, kArrayConds, kArraySems})
    each_copied<sync_instance>(r, c, id, [](sync_instance& s, std::uint64_t) {
      if ((load_acquire(s.lock) & kStateMask) == kStateAllocated) zero_stat(s.stat);
    });
  each_copied<class_record>(r, c, kArrayClasses, [](class_record& k, std::uint64_t) { zero_stat(k.stat); });
  zero_copied<wait_stat>(r, c, kArrayFileWaitStats);
  zero_copied<wait_stat>(r, c, kArraySocketWaitStats);
  each_copied<thread_histogram>(r, c, kArrayWaitHistograms,
                                [](thread_histogram& h, std::uint64_t) { zero(h.h); });
  each_copied<file_instance>(r, c, kArrayFiles, [](file_instance& f, std::uint64_t) { zero(f.stats); });
  each_copied<socket_instance>(r, c, kArraySockets, [](socket_instance& s, std::uint64_t) { zero(s.stats); });
  zero_copied<io_stats>(r, c, kArrayClassIo);  // file and socket classes alike
  each_copied<table_share>(r, c, kArrayTables, [](table_share& t, std::uint64_t) { zero(t.no_index); });
  each_copied<index_stat>(r, c, kArrayTableIndexes, [](index_stat& s, std::uint64_t) { zero(s.stat); });
  each_copied<table_lock_stat>(r, c, kArrayTableLockStats, [](table_lock_stat& t, std::uint64_t) {
    for (wait_stat& s : t.kinds) zero_stat(s);
  });
  // The program's metrics start at zero, as in a new region (the threads' cells are holes).
  each_copied<metric_record>(
      r, c, kArrayMetrics, [](metric_record& m, std::uint64_t) { store_relaxed(m.value, std::uint64_t{0}); });
  // Stages, statements, transactions: by class and by thread.
  zero_copied<wait_stat>(r, c, kArrayClassStageStats);
  zero_copied<statement_stat>(r, c, kArrayClassStatementStats);
  zero_copied<transaction_stat>(r, c, kArrayClassTransactionStats);
  if (me != nullptr) {
    zero_slot<wait_stat>(r, kArrayThreadClassStats, me->slot);
    zero_slot<wait_stat>(r, kArrayThreadGlobalStats, me->slot);
    zero_slot<wait_stat>(r, kArrayThreadStageStats, me->slot);
    zero_slot<statement_stat>(r, kArrayThreadStatementStats, me->slot);
    zero_slot<transaction_stat>(r, kArrayThreadTransactionStats, me->slot);
  }
  region_header& h = r.header();
  __atomic_fetch_add(&h.digest_generation, 1, __ATOMIC_RELEASE);  // the digests are gone
  __atomic_fetch_add(&h.setup_generation, 1, __ATOMIC_RELEASE);
}

}  // namespace

std::size_t fork_copy_plan(const region_map& r, const thread_context* me, const byte_range* data,
                           std::size_t n_data, byte_range* out, std::size_t cap) {
  const auto* base = static_cast<const char*>(static_cast<const void*>(&r.header()));
  std::size_t n = 0;
  bool full = false;
  // The part of [at, at + length) that the parent's file holds as data.
  const auto add = [&](const void* at, std::uint64_t length) {
    if (at == nullptr || length == 0) return;
    const auto lo = static_cast<std::uint64_t>(static_cast<const char*>(at) - base), hi = lo + length;
    for (std::size_t k = 0; k < n_data; ++k) {
      const std::uint64_t from = data[k].offset > lo ? data[k].offset : lo;
      const std::uint64_t to = data[k].offset + data[k].length < hi ? data[k].offset + data[k].length : hi;
      if (from >= to) continue;
      if (n == cap) {
        full = true;
        return;
      }
      out[n++] = {from, to - from};
    }
  };
  const std::uint64_t threads = r.count(kArrayThreads);
  const auto plan = [&] {
    add(base, kHeaderSize);
    for (array_id id : kCopied) add(r.array<char>(id), r.count(id) * r.header().arrays[id].stride);
    if (me != nullptr && threads != 0)
      for (array_id id : kForkingSlot) {
        const std::uint64_t stride = r.header().arrays[id].stride, per = r.count(id) / threads;
        if (r.array<char>(id) != nullptr) add(r.array<char>(id) + me->slot * per * stride, per * stride);
      }
  };
  plan();
  if (full) {  // the data too scattered to list: whole arrays (more copied, the same result)
    const byte_range all{0, r.size()};
    data = &all;
    n_data = 1;
    n = 0;
    full = false;
    plan();
  }
  return n;
}

// The copy becomes the child's: only the forking thread (me, or nullptr if it has
// no slot) is left, and every statistic and history restarts from zero, as in a
// program that just started with these objects.
void make_region_the_childs(agent_state& a, thread_context* me, const byte_range* copied, std::size_t n) {
  const region_map& r = a.region;
  region_header& h = r.header();
  const copied_ranges c{copied, n};
  each_copied<thread_record>(r, c, kArrayThreads, [&](thread_record& rec, std::uint64_t slot) {
    const std::uint32_t word = load_relaxed(rec.lock);
    if ((word & kStateMask) == kStateFree || (me != nullptr && me->rec == &rec) || slot >= a.contexts.size())
      return;
    thread_context& t = a.contexts[slot];
    if (t.rec == &rec && (word & kStateMask) == kStateAllocated) {
      trace_discard(t.trace);  // the parent writes its buffered lines
      t.deferred_class = 0;    // a wait of the parent's, recorded there: not into the child's holes
      // Its wait histograms go to their classes' (zeroed below, not copied).
      for (std::uint32_t k = 0; t.wait_histogram_of != nullptr && k < a.max_classes && k < kMaxClassesLimit;
           ++k)
        if (t.wait_histogram_of[k] != 0 && t.wait_histogram_of[k] != kSharedHistogram)
          g_folded_classes[k / 64] |= std::uint64_t{1} << (k % 64);
      release_thread(t);  // its memory joins its classes' (its wait stack is a hole)
    } else {              // caught in mid-registration by the fork
      store_release(rec.lock, ((word & ~kStateMask) + kVersionInc) | kStateFree);
    }
  });
  auto* class_histograms = r.array<wait_histogram>(kArrayClassWaitHistograms);
  for (std::uint32_t k = 0; k < a.max_classes && k < kMaxClassesLimit; ++k)
    if ((g_folded_classes[k / 64] >> (k % 64) & 1) != 0) {
      if (class_histograms != nullptr && k < r.count(kArrayClassWaitHistograms)) zero(class_histograms[k]);
      g_folded_classes[k / 64] &= ~(std::uint64_t{1} << (k % 64));
    }
  // The histories and long histories are holes; their cursors restart.
  store_relaxed(h.history_long_next_batch, std::uint64_t{0});
  store_relaxed(h.stages_long_next, std::uint64_t{0});
  store_relaxed(h.statements_long_next, std::uint64_t{0});
  store_relaxed(h.transactions_long_next, std::uint64_t{0});
  if (me != nullptr) {
    me->has_batch = false;
    me->deferred_class = 0;  // an acquisition of the parent's, held across the fork
  }
  reset_summaries(r, copied_ranges{copied, n}, me);
  for (std::uint64_t& lost : h.lost) store_relaxed(lost, std::uint64_t{0});
  if (me != nullptr) store_relaxed(me->rec->os_thread_id, static_cast<std::uint64_t>(syscall(SYS_gettid)));
  // The accounts, users and hosts are holes (not copied): the forking thread joins
  // its own again, the child's first connection; their rows are holes (zeros) too.
  if (me != nullptr) {
    store_relaxed(me->rec->account_slot, 0u);
    store_relaxed(me->rec->user_slot, 0u);
    store_relaxed(me->rec->host_slot, 0u);
    join_holders(a, *me, me->rec->user, me->rec->host, true);
  }
  // creation_time_ns stays: the timers' bases are the parent's, and with them the
  // wall clock time their values start from.
  store_relaxed(h.exited, 0u);
  store_release(h.pid, static_cast<std::uint64_t>(getpid()));
}

}  // namespace pfs::detail

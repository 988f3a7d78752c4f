// Memory instrumentation (MySQL 8.0's psi_memory.h: memory_alloc, memory_realloc,
// memory_claim, memory_free). A thread counts its blocks in its own rows of
// kArrayThreadMemoryStats with plain relaxed stores (it is their only writer); what
// has no thread row (global-only classes, threads without a slot, blocks claimed
// from another thread) goes to the class's row with atomic adds. The thread's
// totals (threads.*_MEMORY) and the peaks of its running statements follow every
// call.
#include <cstring>
#include <iterator>
#include <new>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/memory_path.h"
#include "agent/provider/pfs_c.h"
#include "agent/region/memory_layout.h"

namespace pfs::detail {

// constinit: the agent starts from static initializers of other files.
constinit memory_hot_state g_memory;

namespace {

// The owner token of a block: the thread's slot and THREAD_ID, so a claim finds its
// old row only while that thread still holds the slot.
constexpr int kOwnerSlotShift = 48;
pfs_memory_owner owner_of(const thread_context& t) {
  return (pfs_memory_owner{t.slot} + 1) << kOwnerSlotShift | (t.thread_id & ((1ull << kOwnerSlotShift) - 1));
}

// A class row: many writers, atomic adds; the marks follow the sums as they are
// after this change.
void count_in_class(memory_stat& s, std::uint64_t allocs, std::uint64_t alloc_bytes, std::uint64_t frees,
                    std::uint64_t free_bytes) {
  // A side that does not change is read, not added to (a free adds no allocation:
  // the heap's frees at a program's exit, after its threads left, come here).
  const auto add = [](std::uint64_t& sum, std::uint64_t n) {
    return n != 0 ? __atomic_add_fetch(&sum, n, __ATOMIC_RELAXED) : load_relaxed(sum);
  };
  const std::uint64_t ca = add(s.count_alloc, allocs);
  const std::uint64_t ba = add(s.bytes_alloc, alloc_bytes);
  const std::uint64_t cf = add(s.count_free, frees);
  const std::uint64_t bf = add(s.bytes_free, free_bytes);
  const auto used_count = static_cast<std::int64_t>(ca - cf);
  const auto used_bytes = static_cast<std::int64_t>(ba - bf);
  atomic_max(s.high_count, used_count);
  atomic_min(s.low_count, used_count);
  atomic_max(s.high_bytes, used_bytes);
  atomic_min(s.low_bytes, used_bytes);
}

std::uint64_t bytes(std::size_t size) { return static_cast<std::uint64_t>(size); }

// The calling thread's context when it has a row for class c, registering the
// thread on its first call.
thread_context* counting_thread(const class_record& c) {
  if (!(c.traits & kMemoryGlobalOnly) && tls_context == nullptr) current_thread();
  return memory_thread_of(c);
}

// The agent's own memory: the region's arrays, by the tables they hold, as MySQL's
// memory/performance_schema/* classes (global only; allocated once, at start-up).
struct own_class {
  const char* name;
  array_id arrays[11];  // kArrayClasses (0) ends a shorter list, except as the first
};
const own_class kOwnClasses[] = {
    {"setup", {kArrayClasses, kArraySetupActors, kArraySetupObjects, kArraySources}},
    {"threads", {kArrayThreads}},
    {"events_waits", {kArrayWaitStacks, kArrayWaitHistory, kArrayHistoryLong, kArrayHistoryLongBatches}},
    {"events_waits_summaries",
     {kArrayThreadClassStats, kArrayThreadGlobalStats, kArrayWaitHistograms, kArrayClassWaitHistograms}},
    {"instances",
     {kArrayMutexes, kArrayRwlocks, kArrayConds, kArraySems, kArrayFiles, kArrayClassIo, kArrayFileWaitStats,
      kArrayTables, kArrayTableIndexes, kArraySockets, kArraySocketWaitStats}},
    {"events_stages",
     {kArrayStageCurrent, kArrayStageHistory, kArrayStageHistoryLong, kArrayThreadStageStats,
      kArrayClassStageStats}},
    {"events_statements",
     {kArrayStatementCurrent, kArrayStatementHistory, kArrayStatementHistoryLong, kArrayThreadStatementStats,
      kArrayClassStatementStats, kArrayStatementHistogram}},
    {"events_transactions",
     {kArrayTransactionCurrent, kArrayTransactionHistory, kArrayTransactionHistoryLong,
      kArrayThreadTransactionStats, kArrayClassTransactionStats}},
    {"statements_digest", {kArrayDigests}},
    {"lock_contention", {kArrayLockContention}},
    {"memory", {kArrayThreadMemoryStats, kArrayClassMemoryStats}},
};

constexpr std::uint32_t kOwnClassesMinClasses = 64;

}  // namespace

void init_memory(agent_state& a) {
  const region_header& h = a.region.header();
  delete[] g_memory.states;  // a restarted agent (no thread of the old one records)
  g_memory = memory_hot_state{};
  g_memory.per_thread = h.max_memory_classes;
  g_memory.thread_rows = a.region.array<memory_stat>(kArrayThreadMemoryStats);
  g_memory.class_rows = a.region.array<memory_class_stat>(kArrayClassMemoryStats);
  g_memory.threads = a.region.array<thread_record>(kArrayThreads);
  g_memory.thread_count = g_memory.thread_rows == nullptr ? 0 : h.max_threads;
  if (g_memory.class_rows == nullptr) g_memory.per_thread = 0;
  g_memory.states = new (std::nothrow) memory_thread_state[h.max_threads]();
  if (g_memory.states == nullptr) g_memory.thread_count = 0;
  a.memory_classes = 0;
  a.max_memory_classes = g_memory.per_thread;
}

void register_memory_classes(agent_state& a) {
  // Only where the class array has room to spare: a region sized for a handful of
  // classes keeps them for the program's own.
  if (a.max_classes < kOwnClassesMinClasses) return;
  for (const own_class& own : kOwnClasses) {
    const pfs_key key = register_class(kKindMemory, "performance_schema", own.name);
    const class_record* c = memory_class_of(key);
    if (c == nullptr) continue;
    std::uint64_t arrays = 0;
    std::uint64_t size = 0;
    for (std::size_t k = 0; k < std::size(own.arrays); ++k) {
      const array_id id = own.arrays[k];
      if (k > 0 && id == kArrayClasses) break;
      if (a.region.count(id) == 0) continue;
      ++arrays;
      size += a.region.count(id) * a.region.header().arrays[id].stride;
    }
    count_in_class(g_memory.class_rows[c->kind_index].stat, arrays, size, 0, 0);
  }
}

void attach_memory(agent_state&, thread_context& t) {
  t.memory_rows = nullptr;
  t.memory_state = nullptr;
  if (t.slot >= g_memory.thread_count || t.thread_id == 0) return;
  memory_stat* rows = g_memory.thread_rows + std::uint64_t{t.slot} * g_memory.per_thread;
  for (std::uint32_t i = 0; i < g_memory.per_thread; ++i) {
    memory_stat& s = rows[i];
    std::uint64_t* fields[] = {&s.count_alloc, &s.count_free,    &s.bytes_alloc,
                               &s.bytes_free,  &s.claimed_count, &s.claimed_bytes};
    for (std::uint64_t* f : fields) store_relaxed(*f, std::uint64_t{0});
    std::int64_t* marks[] = {&s.low_count, &s.high_count, &s.low_bytes, &s.high_bytes};
    for (std::int64_t* m : marks) store_relaxed(*m, std::int64_t{0});
  }
  thread_record& r = *t.rec;
  store_relaxed(r.controlled_memory, std::int64_t{0});
  store_relaxed(r.max_controlled_memory, std::int64_t{0});
  store_relaxed(r.total_memory, std::int64_t{0});
  store_relaxed(r.max_total_memory, std::int64_t{0});
  g_memory.states[t.slot] = memory_thread_state{};
  // Last: the memory path counts in the rows from here on.
  t.memory_state = &g_memory.states[t.slot];
  t.memory_rows = rows;
}

// An exiting thread's rows join its classes' global part (MySQL aggregates them
// into the thread's account, user and host, or the global rows).
void release_memory(agent_state&, thread_context& t) {
  t.memory_rows = nullptr;
  t.memory_state = nullptr;
  if (t.slot >= g_memory.thread_count) return;
  const memory_stat* rows = g_memory.thread_rows + std::uint64_t{t.slot} * g_memory.per_thread;
  for (std::uint32_t i = 0; i < g_memory.per_thread; ++i) {
    const memory_stat s = load_memory_stat(rows[i]);
    if (s.count_alloc == 0 && s.count_free == 0 && s.claimed_count == 0) continue;
    memory_stat& into = g_memory.class_rows[i].stat;
    __atomic_fetch_add(&into.count_alloc, s.count_alloc, __ATOMIC_RELAXED);
    __atomic_fetch_add(&into.count_free, s.count_free + s.claimed_count, __ATOMIC_RELAXED);
    __atomic_fetch_add(&into.bytes_alloc, s.bytes_alloc, __ATOMIC_RELAXED);
    __atomic_fetch_add(&into.bytes_free, s.bytes_free + s.claimed_bytes, __ATOMIC_RELAXED);
    __atomic_fetch_add(&into.high_count, s.high_count, __ATOMIC_RELAXED);
    __atomic_fetch_add(&into.low_count, s.low_count, __ATOMIC_RELAXED);
    __atomic_fetch_add(&into.high_bytes, s.high_bytes, __ATOMIC_RELAXED);
    __atomic_fetch_add(&into.low_bytes, s.low_bytes, __ATOMIC_RELAXED);
  }
}

void statement_memory_begin(const thread_context& t, std::uint32_t level) {
  if (t.thread_id == 0 || t.slot >= g_memory.thread_count || level == 0 || level > kMaxStatementStack) return;
  memory_thread_state& m = g_memory.states[t.slot];
  m.depth = level;
  m.peaks[level - 1] = {load_relaxed(t.rec->controlled_memory), load_relaxed(t.rec->total_memory)};
}

void statement_memory_end(const thread_context& t, std::uint32_t level, std::int64_t& max_controlled,
                          std::int64_t& max_total) {
  max_controlled = max_total = 0;
  if (t.thread_id == 0 || t.slot >= g_memory.thread_count || level == 0 || level > kMaxStatementStack) return;
  memory_thread_state& m = g_memory.states[t.slot];
  const statement_peaks p = m.peaks[level - 1];
  max_controlled = p.controlled;
  max_total = p.total;
  m.depth = level - 1;
  // The statement around it peaked at least as high.
  if (level >= 2) {
    statement_peaks& outer = m.peaks[level - 2];
    if (p.total > outer.total) outer.total = p.total;
    if (p.controlled > outer.controlled) outer.controlled = p.controlled;
  }
}

}  // namespace pfs::detail

using namespace pfs::detail;

extern "C" {

pfs_key pfs_register_memory(const char* category, const char* name, unsigned flags) {
  if (g_agent == nullptr) pfs_init_from_env();  // as the other registrations: PFS_REGION starts it
  if (g_agent == nullptr) return 0;
  const auto traits = static_cast<std::uint8_t>(((flags & PFS_MEMORY_GLOBAL_ONLY) ? kMemoryGlobalOnly : 0) |
                                                ((flags & PFS_MEMORY_CONTROLLED) ? kMemoryControlled : 0));
  return register_class(kKindMemory, category, name, traits);
}

pfs_key pfs_memory_alloc(pfs_key key, size_t size, pfs_memory_owner* owner) {
  if (owner != nullptr) *owner = 0;
  const class_record* c = memory_class_of(key);
  if (c == nullptr || !(load_relaxed(c->derived) & kFlagEnabled)) return 0;
  if (thread_context* t = counting_thread(*c)) {
    if (!count_thread_alloc(*t, *c, size)) return 0;
    if (owner != nullptr) *owner = owner_of(*t);
  } else {
    count_in_class(g_memory.class_rows[c->kind_index].stat, 1, bytes(size), 0, 0);
  }
  return key;
}

pfs_key pfs_memory_realloc(pfs_key key, size_t old_size, size_t new_size, pfs_memory_owner* owner) {
  const class_record* c = memory_class_of(key);
  if (c == nullptr) {
    if (owner != nullptr) *owner = 0;
    return 0;
  }
  // As MySQL's count_realloc: one free of the old size and one allocation of the new.
  if (thread_context* t = counting_thread(*c)) {
    count_in_thread_row(memory_row_of(*t, *c), 1, bytes(new_size), 1, bytes(old_size));
    account_thread_memory(*t, *c, static_cast<std::int64_t>(new_size) - static_cast<std::int64_t>(old_size));
    if (owner != nullptr) *owner = owner_of(*t);
  } else {
    count_in_class(g_memory.class_rows[c->kind_index].stat, 1, bytes(new_size), 1, bytes(old_size));
    if (owner != nullptr) *owner = 0;
  }
  return key;
}

pfs_key pfs_memory_claim(pfs_key key, size_t size, pfs_memory_owner* owner) {
  const class_record* c = memory_class_of(key);
  if (c == nullptr || owner == nullptr) return 0;
  thread_context* t = counting_thread(*c);
  if (t != nullptr && *owner == owner_of(*t)) return key;  // already ours
  // The old owner's row counts the block freed (claimed_*: it is not the writer of
  // that row); a gone owner's or a global block's class row does.
  const std::uint64_t old_slot = (*owner >> kOwnerSlotShift);
  const std::uint64_t old_id = *owner & ((1ull << kOwnerSlotShift) - 1);
  memory_stat* old_row = nullptr;
  if (old_slot != 0 && old_slot - 1 < g_memory.thread_count) {
    const thread_record& r = g_memory.threads[old_slot - 1];
    if ((load_acquire(r.lock) & kStateMask) == kStateAllocated && load_relaxed(r.thread_id) == old_id)
      old_row = &g_memory.thread_rows[(old_slot - 1) * g_memory.per_thread + c->kind_index];
  }
  if (old_row != nullptr) {
    __atomic_fetch_add(&old_row->claimed_count, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&old_row->claimed_bytes, bytes(size), __ATOMIC_RELAXED);
  } else {
    count_in_class(g_memory.class_rows[c->kind_index].stat, 0, 0, 1, bytes(size));
  }
  if (t != nullptr) {
    count_in_thread_row(memory_row_of(*t, *c), 1, bytes(size), 0, 0);
    account_thread_memory(*t, *c, static_cast<std::int64_t>(size));
    *owner = owner_of(*t);
  } else {
    count_in_class(g_memory.class_rows[c->kind_index].stat, 1, bytes(size), 0, 0);
    *owner = 0;
  }
  return key;
}

void pfs_memory_free(pfs_key key, size_t size, pfs_memory_owner) {
  // Not the class's ENABLED: a block counted at allocation is counted at free.
  const class_record* c = memory_class_of(key);
  if (c == nullptr) return;
  if (thread_context* t = counting_thread(*c)) {
    count_thread_free(*t, *c, size);
  } else {
    count_in_class(g_memory.class_rows[c->kind_index].stat, 0, 0, 1, bytes(size));
  }
}

}  // extern "C"

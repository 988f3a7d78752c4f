// The event path's cold halves: what its inline functions (event_path.h) call out
// of line on a thread's first event, a call site's first wait, a full history_long
// batch, and the first timed wait of a (thread, class). One place, so the event
// path's whole out-of-line part is read at once; each keeps the event path's rules
// (no lock, no allocation, nothing but atomics on shared records).
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/work_internal.h"
#include "agent/region/setup.h"

namespace pfs::detail {

// ---------------------------------------------------------------------------
// A thread's first event: its slot in the thread array (agent_threads.cpp has the
// rest of a thread's life).

thread_context* register_thread_slot(pfs_key thread_class, const char* name) {
  agent_state* a = g_agent;
  if (a == nullptr || !agent_running()) return no_context();
  // Lost: no slot now (tls_context stays unset), so a later event tries again.
  if (!region_attached()) return no_context();
  if (thread_class == 0) thread_class = register_class(kKindThread, "pfs", "unregistered");

  auto* records = a->region.array<thread_record>(kArrayThreads);
  const std::uint32_t n = static_cast<std::uint32_t>(a->contexts.size());
  for (std::uint32_t slot = 0; slot < n; ++slot) {
    thread_record& r = records[slot];
    std::uint32_t word = load_relaxed(r.lock);
    if ((word & kStateMask) != kStateFree) continue;
    if (!__atomic_compare_exchange_n(&r.lock, &word, (word & ~kStateMask) | kStateDirty, false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      continue;
    atomic_max(a->header->thread_slots_used, kThreadSlotsKnown | (slot + 1));
    thread_context& t = a->contexts[slot];
    t = thread_context{};
    t.rec = &r;
    t.slot = slot;
    t.stack = t.stack_base =
        a->region.array<wait_record>(kArrayWaitStacks) + std::uint64_t{slot} * a->stack_depth;
    t.stack_room = a->stack_depth;
    t.history = a->history_size == 0
                    ? nullptr
                    : a->region.array<wait_record>(kArrayWaitHistory) + std::uint64_t{slot} * a->history_size;
    t.class_stats = a->region.array<wait_stat>(kArrayThreadClassStats) + std::uint64_t{slot} * a->max_classes;
    t.global_stats =
        a->region.array<wait_stat>(kArrayThreadGlobalStats) + std::uint64_t{slot} * a->max_classes;
    t.thread_id = __atomic_fetch_add(&a->header->next_thread_id, 1, __ATOMIC_RELAXED);
    for (std::uint32_t i = 0; i < a->stack_depth; ++i) clear_event(t.stack[i]);
    for (std::uint32_t i = 0; i < a->history_size; ++i) clear_event(t.history[i]);
    for (std::uint32_t i = 0; i < a->max_classes; ++i) {
      zero_stat(t.class_stats[i]);
      zero_stat(t.global_stats[i]);
    }
    const std::uint64_t parent = tls_parent_thread_id;
    store_relaxed(r.class_index, thread_class);
    store_relaxed(r.thread_id, t.thread_id);
    store_relaxed(r.os_thread_id, static_cast<std::uint64_t>(syscall(SYS_gettid)));
    store_relaxed(r.parent_thread_id, parent);
    // Background threads are instrumented with history, as in MySQL; a thread
    // that declares an actor becomes foreground and follows setup_actors.
    store_relaxed(r.instrumented, std::uint8_t{1});
    store_relaxed(r.history, std::uint8_t{1});
    store_relaxed(r.foreground, std::uint8_t{0});
    store_relaxed(r.stack_depth, 0u);
    store_relaxed(r.event_id, std::uint64_t{1});
    store_relaxed(r.history_index, std::uint64_t{0});
    copy_field(r.name, kThreadNameLen, name);
    copy_field(r.user, kUserLen, "");
    copy_field(r.host, kHostLen, "");
    copy_field(r.role, kUserLen, "");
    for (std::uint64_t& h : r.horizon) store_relaxed(h, std::uint64_t{0});
    attach_work(*a, t);
    attach_memory(*a, t);
    attach_errors(*a, t);
    join_holders(*a, t, nullptr, nullptr);
    attach_meters(*a, t);
    store_relaxed(r.derived, setup::thread_derived(a->region, r));
    store_relaxed(r.work_derived, setup::work_derived(a->region, r));
    store_release(r.lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
    // A setup change racing with this registration may have missed our record:
    // recompute from the settings as they are now.
    store_relaxed(r.derived, setup::thread_derived(a->region, r));
    store_relaxed(r.work_derived, setup::work_derived(a->region, r));
    tls_context = &t;
    arm_thread_exit_hook();
    return &t;
  }
  bump_lost(kLostThreadInstances);
  tls_context = no_context();
  return tls_context;
}

// ---------------------------------------------------------------------------
// A call site's first wait: its row of the source table (SOURCE).

std::uint32_t intern_source_in_region(const char* file, unsigned line);

std::uint32_t intern_source_slow(thread_context& t, const char* file, unsigned line) {
  const std::uint32_t index = intern_source_in_region(file, line);
  t.last_file = file;
  t.last_line = line;
  t.last_source = index;
  return index;
}

std::uint32_t intern_source_in_region(const char* file, unsigned line) {
  agent_state* a = g_agent;
  if (a->source_count == 0 || file == nullptr) return 0;
  const auto key = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(file));
  const std::uint64_t h = (key ^ (std::uint64_t{line} * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
  // Fast range reduction (no division): (hash32 * n) >> 32.
  std::uint32_t idx = static_cast<std::uint32_t>(((h >> 32) * a->source_count) >> 32);
  for (int probe = 0; probe < 8; ++probe) {
    source_record& s = a->sources[idx];
    std::uint32_t state = load_acquire(s.state);
    if (state == kSourceReady) {
      if (load_relaxed(s.key) == key && load_relaxed(s.line) == line) return idx + 1;
    } else if (state == kSourceFree) {
      std::uint32_t expected = kSourceFree;
      if (__atomic_compare_exchange_n(&s.state, &expected, kSourceWriting, false, __ATOMIC_ACQUIRE,
                                      __ATOMIC_RELAXED)) {
        // Keep the base name: SOURCE is "file.cpp:123" as in MySQL.
        const char* base = std::strrchr(file, '/');
        base = base != nullptr ? base + 1 : file;
        char text[kSourceLen];
        // Line 0: the text is the whole location (the LD_PRELOAD interposer's
        // "module:symbol+0xoff"), shown without a line number.
        int n = line != 0 ? std::snprintf(text, sizeof(text), "%s:%u", base, line)
                          : std::snprintf(text, sizeof(text), "%s", base);
        (void)n;
        for (std::size_t i = 0; i < kSourceLen; ++i) store_relaxed(s.text[i], text[i]);
        store_relaxed(s.key, key);
        store_relaxed(s.line, static_cast<std::uint32_t>(line));
        store_release(s.state, kSourceReady);
        return idx + 1;
      }
      if (expected == kSourceReady && load_relaxed(s.key) == key && load_relaxed(s.line) == line)
        return idx + 1;
    }
    // Another call site, or one being written right now: probe on.
    idx = idx + 1 == a->source_count ? 0 : idx + 1;
  }
  bump_lost(kLostSources);
  return 0;
}

// ---------------------------------------------------------------------------
// history_long

// history_long is filled in batches of slots that one thread owns at a time, so
// threads do not share a cache line per event (a global index per event triples
// the cost with two threads); "the latest N events" stays true to within one
// batch per thread.
bool claim_batch(thread_context& t) {
  agent_state& a = *g_agent;
  if (t.has_batch) store_release(a.batches[t.batch].owner, std::uint64_t{0});
  t.has_batch = false;
  // A few tries: a batch still being filled by a slow thread is skipped.
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::uint64_t n = __atomic_fetch_add(&a.next_batch.value, 1, __ATOMIC_RELAXED);
    if (load_relaxed(a.header->history_long_next_batch) < a.batch_count)
      __atomic_fetch_add(&a.header->history_long_next_batch, 1, __ATOMIC_RELAXED);
    const std::uint64_t b = n % a.batch_count;
    std::uint64_t expected = 0;
    if (__atomic_compare_exchange_n(&a.batches[b].owner, &expected, t.thread_id, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
      t.batch = b;
      t.batch_next = static_cast<std::uint32_t>(b * a.history_long_batch);
      const std::uint64_t end = (b + 1) * a.history_long_batch;
      t.batch_end = static_cast<std::uint32_t>(end < a.history_long_size ? end : a.history_long_size);
      t.has_batch = true;
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// Wait histograms

// The first timed wait of a (thread, class): claim a histogram of its own from the
// pool, or share the class's (atomic adds) when the pool is used up.
void add_to_histogram_slow(thread_context& t, std::uint32_t class_index, std::uint64_t ps) {
  std::uint32_t& entry = t.wait_histogram_of[class_index - 1];
  if (entry == 0) {
    const std::uint32_t e = claim_pool_histogram(t.thread_id, class_index);
    entry = e != 0 ? e : kSharedHistogram;
  }
  if (entry == kSharedHistogram) {
    __atomic_fetch_add(
        &g_work.class_wait_histograms[class_index - 1].counts[histogram::wait_scale::bucket_of(ps)], 1,
        __ATOMIC_RELAXED);
    return;
  }
  add_to_histogram(t, class_index, ps);
}

}  // namespace pfs::detail

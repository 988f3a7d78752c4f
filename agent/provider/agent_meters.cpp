// The program's own metrics (MySQL 8.4's telemetry meters and metrics; the records:
// meter_layout.h). Registration takes the registry mutex and writes a record once;
// an update is one relaxed load and store in the calling thread's own cell (counters
// and up-down counters) or one relaxed store in the metric's record (gauges), so it
// never waits, allocates or makes a system call.
//
// Observed (ASYNC) metrics are read by their callbacks on one thread of the agent
// (meter_watch.cpp), at their meter's FREQUENCY while it is ENABLED.
#include <cstring>
#include <new>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/meter_internal.h"
#include "agent/provider/pfs_c.h"

namespace pfs::detail {

constinit std::atomic<meter_state*> g_meter_state{nullptr};

namespace {

constexpr std::uint32_t kIndexMask = kMetricIndexMask;

// The record of a handle of the current state; nullptr for 0 or a stale handle.
metric_record* record_of(pfs_metric m) {
  const meter_state* st = g_meter_state.load(std::memory_order_acquire);
  const std::uint32_t i = (m & kIndexMask) - 1;
  if (st == nullptr || !(m & kHandleValid) || i >= st->max_metrics) return nullptr;
  return &st->metrics[i];
}

bool valid_text(const char* s, std::size_t cap) { return s == nullptr || strnlen(s, cap) < cap; }

void add_double_atomic(std::uint64_t& cell, double d) {
  std::uint64_t seen = load_relaxed(cell);
  while (!__atomic_compare_exchange_n(&cell, &seen,
                                      std::bit_cast<std::uint64_t>(std::bit_cast<double>(seen) + d), true,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

// An add that does not go to the thread's cells: gauges, and threads without a slot
// (a thread's first add registers it; if it gets no slot, atomic adds in the record).
void add_shared(pfs_metric m, std::int64_t i, double d) {
  if ((m & kHandleSharded) != 0) {
    thread_context* t = current_thread();
    const std::uint32_t index = (m & kIndexMask) - 1;
    if (t != nullptr && index < t->metric_count) {
      std::uint64_t& c = t->metric_cells[index];
      store_relaxed(c, (m & kHandleDouble)
                           ? std::bit_cast<std::uint64_t>(std::bit_cast<double>(load_relaxed(c)) + d)
                           : load_relaxed(c) + static_cast<std::uint64_t>(i));
      return;
    }
  }
  metric_record* r = record_of(m);
  if (r == nullptr) return;
  if (m & kHandleDouble)
    add_double_atomic(r->value, d);
  else
    __atomic_fetch_add(&r->value, static_cast<std::uint64_t>(i), __ATOMIC_RELAXED);
}

// A registered name in a fixed-size field, compared without copying it.
bool same_name(const char* field, std::size_t cap, const char* name) {
  return std::strncmp(field, name, cap) == 0;
}

}  // namespace

void init_meters(agent_state& a) {
  const region_header& h = a.region.header();
  auto* st = new (std::nothrow) meter_state{};
  if (st != nullptr) {
    st->header = a.header;
    st->meters = a.region.array<meter_record>(kArrayMeters);
    st->metrics = a.region.array<metric_record>(kArrayMetrics);
    st->cells = a.region.array<std::uint64_t>(kArrayThreadMetricValues);
    st->max_meters = st->meters == nullptr ? 0 : h.max_meters;
    st->max_metrics = st->metrics == nullptr ? 0 : h.max_metrics;
    st->thread_count = st->cells == nullptr ? 0 : h.max_threads;
    st->observers = new (std::nothrow) observer[st->max_metrics + 1]();
    st->last_call_ns = new (std::nothrow) std::uint64_t[st->max_meters + 1]();
    if (st->observers == nullptr || st->last_call_ns == nullptr) st->max_metrics = st->max_meters = 0;
  }
  // The previous agent's state stays allocated: the meter thread may still read it.
  g_meter_state.store(st, std::memory_order_release);
}

void attach_meters(agent_state&, thread_context& t) {
  const meter_state* st = g_meter_state.load(std::memory_order_acquire);
  t.metric_cells = nullptr;
  t.metric_count = 0;
  if (st == nullptr || st->cells == nullptr || t.slot >= st->thread_count) return;
  std::uint64_t* cells = st->cells + std::uint64_t{t.slot} * st->max_metrics;
  for (std::uint32_t i = 0; i < st->max_metrics; ++i) store_relaxed(cells[i], std::uint64_t{0});
  t.metric_cells = cells;
  t.metric_count = st->max_metrics;
}

void release_meters(agent_state&, thread_context& t) {
  const meter_state* st = g_meter_state.load(std::memory_order_acquire);
  std::uint64_t* cells = t.metric_cells;
  const std::uint32_t n = t.metric_count;
  t.metric_cells = nullptr;
  t.metric_count = 0;
  if (st == nullptr || cells == nullptr) return;
  region_header& h = *st->header;
  // Readers sum again when a fold started or ended meanwhile (meter_layout.h).
  __atomic_fetch_add(&h.metric_folds_started, 1, __ATOMIC_SEQ_CST);
  const std::uint32_t declared = __atomic_load_n(&st->metrics_declared, __ATOMIC_ACQUIRE);
  for (std::uint32_t i = 0; i < n && i < declared; ++i) {
    const std::uint64_t v = load_relaxed(cells[i]);
    if (v == 0) continue;
    if (st->metrics[i].num_type == kMetricDouble)
      add_double_atomic(st->metrics[i].value, std::bit_cast<double>(v));
    else
      __atomic_fetch_add(&st->metrics[i].value, v, __ATOMIC_RELAXED);
    store_relaxed(cells[i], std::uint64_t{0});
  }
  __atomic_fetch_add(&h.metric_folds_finished, 1, __ATOMIC_SEQ_CST);
}

}  // namespace pfs::detail

using namespace pfs::detail;

extern "C" {

pfs_meter pfs_register_meter(const char* name, const char* description, unsigned frequency) {
  if (g_agent == nullptr) pfs_init_from_env();  // as the other registrations: PFS_REGION starts it
  agent_state* a = g_agent;
  meter_state* st = g_meter_state.load(std::memory_order_acquire);
  if (a == nullptr || st == nullptr || name == nullptr || *name == '\0' || !valid_text(name, kMeterNameLen))
    return 0;
  std::lock_guard<std::mutex> guard(a->registry_mutex);
  for (std::uint32_t i = 0; i < st->meters_declared; ++i)
    if (same_name(st->meters[i].name, kMeterNameLen, name)) return i + 1;
  if (st->meters_declared >= st->max_meters) {
    bump_lost(kLostMeters);
    return 0;
  }
  const std::uint32_t i = st->meters_declared;
  meter_record& r = st->meters[i];
  store_relaxed(r.frequency, frequency == 0 ? kDefaultMeterFrequency : std::uint32_t{frequency});
  store_relaxed(r.enabled, std::uint8_t{1});
  copy_field(r.name, kMeterNameLen, name);
  copy_field(r.description, kMeterDescriptionLen, description);  // a longer one is cut
  store_release(r.lock, kVersionInc | kStateAllocated);
  __atomic_store_n(&st->meters_declared, i + 1, __ATOMIC_RELEASE);
  return i + 1;
}

pfs_metric pfs_register_metric(pfs_meter meter, const char* name, int type, int num_type, const char* unit,
                               const char* description) {
  if (g_agent == nullptr) pfs_init_from_env();
  agent_state* a = g_agent;
  meter_state* st = g_meter_state.load(std::memory_order_acquire);
  if (a == nullptr || st == nullptr || meter == 0 || name == nullptr || *name == '\0' ||
      !valid_text(name, kMeterNameLen) || !valid_text(unit, kMeterUnitLen) || type < kMetricCounter ||
      type > kMetricAsyncGauge || (num_type != kMetricInteger && num_type != kMetricDouble))
    return 0;
  std::lock_guard<std::mutex> guard(a->registry_mutex);
  if (meter > st->meters_declared) return 0;
  for (std::uint32_t i = 0; i < st->metrics_declared; ++i) {
    const metric_record& r = st->metrics[i];
    if (r.meter_index == meter && same_name(r.name, kMeterNameLen, name))
      return metric_handle(i, r.type, r.num_type);
  }
  if (st->metrics_declared >= st->max_metrics) {
    bump_lost(kLostMetrics);
    return 0;
  }
  const std::uint32_t i = st->metrics_declared;
  metric_record& r = st->metrics[i];
  store_relaxed(r.value, std::uint64_t{0});  // 0 and 0.0 have the same bits
  store_relaxed(r.meter_index, std::uint32_t{meter});
  store_relaxed(r.type, static_cast<std::uint8_t>(type));
  store_relaxed(r.num_type, static_cast<std::uint8_t>(num_type));
  copy_field(r.name, kMeterNameLen, name);
  copy_field(r.unit, kMeterUnitLen, unit);
  copy_field(r.description, kMeterDescriptionLen, description);
  store_release(r.lock, kVersionInc | kStateAllocated);
  __atomic_store_n(&st->metrics_declared, i + 1, __ATOMIC_RELEASE);
  return metric_handle(i, r.type, r.num_type);
}

pfs_metric pfs_register_observed_metric(pfs_meter meter, const char* name, int type, int num_type,
                                        const char* unit, const char* description, pfs_observe_fn callback,
                                        void* arg) {
  if (callback == nullptr || !metric_observed(static_cast<std::uint8_t>(type))) return 0;
  const pfs_metric m = pfs_register_metric(meter, name, type, num_type, unit, description);
  meter_state* st = g_meter_state.load(std::memory_order_acquire);
  if (m == 0 || st == nullptr) return 0;
  observer& o = st->observers[(m & kIndexMask) - 1];
  __atomic_store_n(&o.arg, arg, __ATOMIC_RELAXED);
  __atomic_store_n(&o.fn, callback, __ATOMIC_RELEASE);  // the meter thread sees arg with it
  start_meter_watch();
  return m;
}

void pfs_unregister_observer(pfs_metric metric) {
  meter_state* st = g_meter_state.load(std::memory_order_acquire);
  const std::uint32_t i = (metric & kIndexMask) - 1;
  if (st == nullptr || !(metric & kHandleValid) || i >= st->max_metrics) return;
  __atomic_store_n(&st->observers[i].fn, static_cast<pfs_observe_fn>(nullptr), __ATOMIC_SEQ_CST);
  wait_for_observer(metric);
}

void pfs_metric_add(pfs_metric metric, std::int64_t delta) {
  if ((metric & (kHandleSharded | kHandleDouble)) != kHandleSharded) [[unlikely]] {
    if ((metric & kHandleDouble) == 0) add_shared(metric, delta, 0);
    return;
  }
  if ((metric & kHandleMonotonic) && delta < 0) return;
  thread_context* t = tls_context;
  const std::uint32_t i = (metric & kIndexMask) - 1;
  if (t != nullptr && i < t->metric_count) [[likely]] {
    std::uint64_t& c = t->metric_cells[i];
    store_relaxed(c, load_relaxed(c) + static_cast<std::uint64_t>(delta));
    return;
  }
  add_shared(metric, delta, 0);
}

void pfs_metric_add_double(pfs_metric metric, double delta) {
  if ((metric & (kHandleSharded | kHandleDouble)) != (kHandleSharded | kHandleDouble)) [[unlikely]] {
    if (metric & kHandleDouble) add_shared(metric, 0, delta);
    return;
  }
  if ((metric & kHandleMonotonic) && !(delta >= 0)) return;  // a NaN too
  thread_context* t = tls_context;
  const std::uint32_t i = (metric & kIndexMask) - 1;
  if (t != nullptr && i < t->metric_count) [[likely]] {
    std::uint64_t& c = t->metric_cells[i];
    store_relaxed(c, std::bit_cast<std::uint64_t>(std::bit_cast<double>(load_relaxed(c)) + delta));
    return;
  }
  add_shared(metric, 0, delta);
}

void pfs_metric_set(pfs_metric metric, std::int64_t value) {
  if ((metric & (kHandleSharded | kHandleDouble)) != 0) return;  // counters add; doubles: _double
  metric_record* r = record_of(metric);
  if (r != nullptr) store_relaxed(r->value, static_cast<std::uint64_t>(value));
}

void pfs_metric_set_double(pfs_metric metric, double value) {
  if ((metric & (kHandleSharded | kHandleDouble)) != kHandleDouble) return;
  metric_record* r = record_of(metric);
  if (r != nullptr) store_relaxed(r->value, std::bit_cast<std::uint64_t>(value));
}

std::uint64_t* pfs_metric_gauge_cell(pfs_metric metric) {
  if ((metric & kHandleSharded) != 0) return nullptr;
  metric_record* r = record_of(metric);
  return r != nullptr && load_relaxed(r->type) == kMetricGauge ? &r->value : nullptr;
}

}  // extern "C"

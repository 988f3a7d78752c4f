// The program's own metrics for C++ (MySQL 8.4's telemetry meters and metrics:
// setup_meters, setup_metrics). A meter groups metrics and has an export
// FREQUENCY (seconds) that SQL may change, as its ENABLED.
//
//   constinit pfs::meter shop{"shop", "the shop's numbers"};
//   constinit pfs::counter<std::int64_t> orders{shop, "orders", "{order}", "orders taken"};
//   constinit pfs::gauge<double> load{shop, "load", "1", "share of the workers busy"};
//   orders.add(1);   // one relaxed load and store in the thread's own cell
//   load.set(0.5);   // one relaxed store
//   pfs::observed_gauge<std::int64_t> queue{shop, "queue", "{job}", "jobs waiting",
//                                           [] { return jobs_waiting(); }};
//
// Meters and metrics are declared on their first use (the first declaration starts
// the agent from PFS_REGION, as any registration does; if the agent is not running
// then, the metric records nothing, and costs one load and branch per update); an
// observed gauge when it is made, and its callback runs on the agent's meter thread every FREQUENCY seconds
// while the meter is ENABLED, until the object is destroyed. Updates count whether
// the meter is ENABLED or not. Sits on the C ABI (pfs_c.h), so it compiles to
// nothing under PFS_NO_INSTRUMENTATION.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

#include "agent/provider/pfs_c.h"
#ifndef PFS_NO_INSTRUMENTATION
#include "agent/provider/event_path.h"  // the thread's context: its metric cells
#endif

namespace pfs {

class meter {
 public:
  // frequency: seconds between exports (and observed metrics' calls); 0: MySQL's 10.
  constexpr meter(const char* name, const char* description = nullptr, unsigned frequency = 0)
      : name_(name), description_(description), frequency_(frequency) {}
  meter(const meter&) = delete;
  meter& operator=(const meter&) = delete;

  // The meter's handle, declaring it first; kNone when it could not be.
  static constexpr pfs_meter kNone = UINT32_MAX;  // no metric registers in it
  pfs_meter id() const {
    pfs_meter m = id_.load(std::memory_order_acquire);
    if (m == 0) [[unlikely]] {
      m = pfs_register_meter(name_, description_, frequency_);
      if (m == 0) m = kNone;  // tried once: updates do not try again
      id_.store(m, std::memory_order_release);
    }
    return m;
  }

 private:
  const char* name_;
  const char* description_;
  unsigned frequency_;
  mutable std::atomic<pfs_meter> id_{0};
};

namespace detail {

template <class T>
constexpr int num_type_of() {
  static_assert(std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>,
                "a metric holds std::int64_t or double");
  return std::is_same_v<T, double> ? PFS_METRIC_DOUBLE : PFS_METRIC_INTEGER;
}

// A metric of one kind, declared on its first update.
template <class T, int Type>
class metric {
 public:
  constexpr metric(const meter& m, const char* name, const char* unit = nullptr,
                   const char* description = nullptr)
      : meter_(m), name_(name), unit_(unit), description_(description) {}
  metric(const metric&) = delete;
  metric& operator=(const metric&) = delete;

  // The metric's handle, declaring it first; kNone when it could not be (a handle
  // of index 0 that every call ignores).
  static constexpr pfs_metric kNone = 1u << 24;
  pfs_metric id() const {
    pfs_metric h = id_.load(std::memory_order_relaxed);
    if (h == 0) [[unlikely]] {
      h = pfs_register_metric(meter_.id(), name_, Type, num_type_of<T>(), unit_, description_);
      if (h == 0) h = kNone;                    // tried once: updates do not try again
      id_.store(h, std::memory_order_relaxed);  // the same value from every thread
    }
    return h;
  }

 protected:
  // Counters and up-down counters: inline, the thread's own cell (one relaxed load
  // and store); otherwise (a thread without a slot yet, no agent) the C ABI.
  void add_value(T v) const {
    const pfs_metric h = id();
#ifndef PFS_NO_INSTRUMENTATION
    const std::uint32_t i = PFS_METRIC_INDEX(h) - 1;
    const pfs::detail::thread_context* t = pfs::detail::tls_context;
    if (t != nullptr && i < t->metric_count && (Type != PFS_METRIC_COUNTER || v >= 0)) [[likely]] {
      std::uint64_t& c = t->metric_cells[i];
      const std::uint64_t old = __atomic_load_n(&c, __ATOMIC_RELAXED);
      std::uint64_t now;
      if constexpr (std::is_same_v<T, double>)
        now = std::bit_cast<std::uint64_t>(std::bit_cast<double>(old) + v);
      else
        now = old + static_cast<std::uint64_t>(v);
      __atomic_store_n(&c, now, __ATOMIC_RELAXED);
      return;
    }
#endif
    if constexpr (std::is_same_v<T, double>)
      pfs_metric_add_double(h, v);
    else
      pfs_metric_add(h, v);
  }
  // Gauges: inline, one relaxed store in the metric's record (its cell, looked up once).
  void set_value(T v) const {
    std::uint64_t* c = cell_.load(std::memory_order_relaxed);
    if (c == nullptr) [[unlikely]] {
      c = pfs_metric_gauge_cell(id());
      if (c == nullptr) {
        if constexpr (std::is_same_v<T, double>)
          pfs_metric_set_double(id(), v);
        else
          pfs_metric_set(id(), v);
        return;
      }
      cell_.store(c, std::memory_order_relaxed);
    }
    __atomic_store_n(c, std::bit_cast<std::uint64_t>(v), __ATOMIC_RELAXED);
  }

 private:
  const meter& meter_;
  const char* name_;
  const char* unit_;
  const char* description_;
  mutable std::atomic<pfs_metric> id_{0};
  mutable std::atomic<std::uint64_t*> cell_{nullptr};  // a gauge's value cell
};

}  // namespace detail

// COUNTER: only grows (a negative delta is ignored).
template <class T = std::int64_t>
class counter : public detail::metric<T, PFS_METRIC_COUNTER> {
 public:
  using detail::metric<T, PFS_METRIC_COUNTER>::metric;
  void add(T delta) const { this->add_value(delta); }
};

// UPDOWN COUNTER: grows and shrinks.
template <class T = std::int64_t>
class updown_counter : public detail::metric<T, PFS_METRIC_UPDOWN_COUNTER> {
 public:
  using detail::metric<T, PFS_METRIC_UPDOWN_COUNTER>::metric;
  void add(T delta) const { this->add_value(delta); }
};

// GAUGE COUNTER: the last value set.
template <class T = std::int64_t>
class gauge : public detail::metric<T, PFS_METRIC_GAUGE> {
 public:
  using detail::metric<T, PFS_METRIC_GAUGE>::metric;
  void set(T value) const { this->set_value(value); }
};

// ASYNC GAUGE COUNTER: the value the callback returns, read by the agent's meter
// thread every FREQUENCY seconds while the meter is ENABLED. The callback runs on
// that thread: it must not wait for the program's locks for long (it delays the
// other meters' callbacks), and it is never called once the destructor returns.
template <class T = std::int64_t>
class observed_gauge {
 public:
  observed_gauge(const meter& m, const char* name, const char* unit, const char* description,
                 std::function<T()> callback)
      : callback_(std::move(callback)) {
    id_ = pfs_register_observed_metric(m.id(), name, PFS_METRIC_ASYNC_GAUGE, detail::num_type_of<T>(), unit,
                                       description, &observed_gauge::observe, this);
  }
  ~observed_gauge() { pfs_unregister_observer(id_); }
  observed_gauge(const observed_gauge&) = delete;
  observed_gauge& operator=(const observed_gauge&) = delete;

  pfs_metric id() const { return id_; }

 private:
  static void observe(pfs_metric m, void* self) {
    const T v = static_cast<observed_gauge*>(self)->callback_();
    if constexpr (std::is_same_v<T, double>)
      pfs_metric_set_double(m, v);
    else
      pfs_metric_set(m, v);
  }

  std::function<T()> callback_;
  pfs_metric id_ = 0;
};

}  // namespace pfs

// The agent's state of the program's metrics (agent_meters.cpp), shared with the
// meter thread that calls the observed metrics' callbacks (meter_watch.cpp).
#pragma once

#include <atomic>
#include <cstdint>

#include "agent/provider/pfs_c.h"
#include "agent/region/meter_layout.h"

namespace pfs::detail {

// An observed metric's callback. fn is published with release after arg, and
// cleared by pfs_unregister_observer.
struct observer {
  pfs_observe_fn fn;
  void* arg;
};

// Made by each agent start and never freed (the meter thread may still read the
// previous one; a restart happens in tests only).
struct meter_state {
  layout::region_header* header = nullptr;
  layout::meter_record* meters = nullptr;
  layout::metric_record* metrics = nullptr;
  std::uint64_t* cells = nullptr;  // thread_count * max_metrics
  std::uint32_t max_meters = 0;
  std::uint32_t max_metrics = 0;
  std::uint32_t thread_count = 0;
  std::uint32_t meters_declared = 0;      // written under the registry mutex, release
  std::uint32_t metrics_declared = 0;     // the same
  observer* observers = nullptr;          // max_metrics
  std::uint64_t* last_call_ns = nullptr;  // per meter, CLOCK_MONOTONIC: the meter thread's only
};

extern constinit std::atomic<meter_state*> g_meter_state;

// A handle (pfs_metric) carries its metric's kind, so that an update needs no load
// to know where it goes: the 1-based index in the low 24 bits, and these bits.
inline constexpr std::uint32_t kMetricIndexMask = 0x00FFFFFF;
inline constexpr std::uint32_t kHandleDouble = 1u << 31;
inline constexpr std::uint32_t kHandleSharded = 1u << 30;    // adds go to the thread's cells
inline constexpr std::uint32_t kHandleMonotonic = 1u << 29;  // a counter: negative deltas are ignored
inline constexpr std::uint32_t kHandleValid = 1u << 28;
inline pfs_metric metric_handle(std::uint32_t index, std::uint8_t type, std::uint8_t num_type) {
  pfs_metric h = (index + 1) | kHandleValid;
  if (num_type == layout::kMetricDouble) h |= kHandleDouble;
  if (layout::metric_sharded(type)) h |= kHandleSharded;
  if (type == layout::kMetricCounter) h |= kHandleMonotonic;
  return h;
}

// Starts the meter thread unless it runs (one per process, for every meter).
void start_meter_watch();
// Returns once no callback of this metric is running (at once on the meter thread).
void wait_for_observer(pfs_metric metric);

}  // namespace pfs::detail

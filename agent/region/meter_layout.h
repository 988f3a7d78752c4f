// The program's own metrics (layout 6, beyond MySQL 8.0): the records of
// setup_meters and setup_metrics, as MySQL 8.4's telemetry tables show them
// ("The setup_meters Table", "The setup_metrics Table").
//
// A meter is a named group of metrics with an export FREQUENCY (seconds) and
// ENABLED; a metric belongs to one meter. Both are declared by the program and
// never freed (lock: kStateFree until the fields are written, then
// kStateAllocated, published with release). FREQUENCY and ENABLED are setup
// state: written by setup writers under the setup lock, read relaxed.
//
// A metric's value lives in two places, so that an update costs one relaxed load
// and store in a cache line no other thread writes (per-thread shards: a shared
// line costs tens of nanoseconds per update under two threads, docs/performance.md):
// - kArrayThreadMetricValues: max_threads * max_metrics cells, the cells of thread
//   slot s at [s * max_metrics, (s + 1) * max_metrics), written by that thread only.
//   Counters and up-down counters add there.
// - metric_record::value, on a cache line of its own: gauges store there (the last
//   value wins), threads without a slot add there atomically, and a thread's cells
//   are folded into it when the thread ends.
// VALUE = value + the cells of the live threads (integers as int64, doubles as the
// bits of a double). An ending thread counts its fold in
// region_header::metric_folds_started before and metric_folds_finished after it,
// so that a reader never counts a folding thread's cells twice: it sums again
// when the two differ or changed while it summed.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "agent/region/region_layout.h"

namespace pfs::layout {

inline constexpr std::size_t kMeterNameLen = 64;             // NAME, METER varchar(63) in MySQL 8.4
inline constexpr std::size_t kMeterUnitLen = 64;             // UNIT varchar(63)
inline constexpr std::size_t kMeterDescriptionLen = 256;     // DESCRIPTION (MySQL: 1023; longer ones are cut)
inline constexpr std::uint32_t kDefaultMeterFrequency = 10;  // seconds, MySQL's default
// FREQUENCY's range (MySQL 8.4: MEDIUMINT UNSIGNED; a meter is exported at most
// once a second).
inline constexpr std::int64_t kMinMeterFrequency = 1;
inline constexpr std::int64_t kMaxMeterFrequency = 16777215;

// METRIC_TYPE. MySQL 8.4 has the three observed (ASYNC) kinds; the synchronous ones,
// updated by the program as things happen, are named as MySQL's without "ASYNC ".
enum metric_type : std::uint8_t {
  kMetricCounter = 1,             // "COUNTER": only grows
  kMetricUpdownCounter = 2,       // "UPDOWN COUNTER": grows and shrinks
  kMetricGauge = 3,               // "GAUGE COUNTER": the last value set
  kMetricAsyncCounter = 4,        // "ASYNC COUNTER": read by a callback at the meter's FREQUENCY
  kMetricAsyncUpdownCounter = 5,  // "ASYNC UPDOWN COUNTER"
  kMetricAsyncGauge = 6,          // "ASYNC GAUGE COUNTER"
};
inline constexpr bool metric_observed(std::uint8_t type) { return type >= kMetricAsyncCounter; }
// Counters and up-down counters add in the thread's cells; gauges store in the record.
inline constexpr bool metric_sharded(std::uint8_t type) {
  return type == kMetricCounter || type == kMetricUpdownCounter;
}
inline const char* metric_type_name(std::uint8_t type) {
  switch (type) {
    case kMetricCounter:
      return "COUNTER";
    case kMetricUpdownCounter:
      return "UPDOWN COUNTER";
    case kMetricGauge:
      return "GAUGE COUNTER";
    case kMetricAsyncCounter:
      return "ASYNC COUNTER";
    case kMetricAsyncUpdownCounter:
      return "ASYNC UPDOWN COUNTER";
    case kMetricAsyncGauge:
      return "ASYNC GAUGE COUNTER";
    default:
      return nullptr;
  }
}

// NUM_TYPE.
enum metric_num_type : std::uint8_t { kMetricInteger = 1, kMetricDouble = 2 };
inline const char* metric_num_type_name(std::uint8_t num) {
  return num == kMetricInteger ? "INTEGER" : num == kMetricDouble ? "DOUBLE" : nullptr;
}

// setup_meters rows.
struct meter_record {
  std::uint32_t lock;       // version+state
  std::uint32_t frequency;  // FREQUENCY, seconds (setup writers)
  std::uint8_t enabled;     // ENABLED (setup writers)
  std::uint8_t pad[7];
  char name[kMeterNameLen];
  char description[kMeterDescriptionLen];
};

// setup_metrics rows. The first cache line is the value (the array starts on a
// line and the record is whole lines): gauges and threads without a slot write it,
// the rest is written once.
struct metric_record {
  std::uint64_t value;  // int64, or the bits of a double (num_type)
  std::uint64_t pad_value[7];
  std::uint32_t lock;         // version+state
  std::uint32_t meter_index;  // 1-based into kArrayMeters
  std::uint8_t type;          // metric_type
  std::uint8_t num_type;      // metric_num_type
  std::uint8_t pad[6];
  char name[kMeterNameLen];
  char unit[kMeterUnitLen];
  char description[kMeterDescriptionLen];
  std::uint64_t pad_end[6];
};

static_assert(sizeof(meter_record) == 336);
static_assert(sizeof(metric_record) == 512 && sizeof(metric_record) % 64 == 0);
static_assert(offsetof(metric_record, lock) == 64);
static_assert(std::is_trivially_copyable_v<metric_record> && std::is_standard_layout_v<metric_record>);

// Adds two cells of a metric of num_type.
inline std::uint64_t add_metric_cells(std::uint8_t num_type, std::uint64_t a, std::uint64_t b) {
  if (num_type == kMetricDouble)
    return std::bit_cast<std::uint64_t>(std::bit_cast<double>(a) + std::bit_cast<double>(b));
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(a) + static_cast<std::int64_t>(b));
}

}  // namespace pfs::layout

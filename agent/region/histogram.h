// The statement latency histogram of MySQL 8.0 (events_statements_histogram_*,
// QUANTILE_95/99/999 of events_statements_summary_by_digest), bucket for bucket, and
// the wait histogram (events_waits_histogram_global_by_event_name, beyond MySQL): the
// same growth factor from 1 ns.
//
// MySQL (storage/perfschema/pfs_histogram.h and pfs_histogram.cc): NUMBER_OF_BUCKETS
// is 450 and PFS_histogram_timers::init() fills m_bucket_timer[0..450] in picoseconds:
//   m_bucket_timer[0]   = 0
//   m_bucket_timer[i]   = (ulonglong) t_i, i = 1..449, where t_1 = BUCKET_BASE_TIMER =
//                         10^7 (10 us) and t_{i+1} = t_i * BUCKET_BASE_FACTOR
//                         (1.0471285480508996 = 10^(1/50)), a running product in doubles
//   m_bucket_timer[450] = UINT64_MAX
// Bucket i holds the durations d with m_bucket_timer[i] <= d < m_bucket_timer[i + 1]
// (time_normalizer::bucket_index in pfs_timer.cc: low inclusive, high exclusive; the
// last bucket also takes UINT64_MAX). BUCKET_TIMER_LOW / BUCKET_TIMER_HIGH of bucket i
// are m_bucket_timer[i] / m_bucket_timer[i + 1].
//
// The bounds are computed here at compile time by the same double loop; the result
// is the same because IEEE multiplication is correctly rounded both at compile time
// and at run time (one multiplication, nothing to contract into an FMA).
//
// MySQL classifies a statement's duration in the statement timer's unit (nanoseconds)
// against the bounds divided by the unit (pfs_timer.cc, init_timers); bucket_of takes
// picoseconds and compares them with the picosecond bounds.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace pfs::histogram {

namespace detail {

inline constexpr double kGrowth = 1.0471285480508996;  // BUCKET_BASE_FACTOR
inline constexpr std::uint64_t kInfinity = std::numeric_limits<std::uint64_t>::max();

// bucket_of looks up a candidate bucket by the position of the highest set bit and
// the kSubBits bits after it. Such a slice of values spans at most 1/32 (3.1 %) of
// its start, less than the 4.7 % between two bounds, so it contains at most one
// bound: the value is in the candidate bucket or the next one (checked by
// make_tables).
inline constexpr int kSubBits = 5;
inline constexpr int kSlices = 64 << kSubBits;

template <std::uint32_t N>
struct tables {
  std::uint64_t bound[N + 1] = {};           // MySQL's m_bucket_timer
  std::uint64_t last_in[N] = {};             // the largest value of bucket i
  std::uint16_t first_bucket[kSlices] = {};  // the bucket of each slice's smallest value
  bool consistent = false;
};

// The slice of a value: its highest set bit (0 for 0) and the kSubBits bits after it.
constexpr std::uint32_t slice_of(std::uint64_t ps) noexcept {
  const int top = 63 - std::countl_zero(ps | 1);
  const auto next_bits =
      static_cast<std::uint32_t>((ps << (63 - top)) >> (63 - kSubBits)) & ((1U << kSubBits) - 1);
  return (static_cast<std::uint32_t>(top) << kSubBits) | next_bits;
}

template <std::uint32_t N>
constexpr tables<N> make_tables(double first_bound) {
  tables<N> t;
  double current = first_bound;
  t.bound[0] = 0;
  for (std::uint32_t i = 1; i < N; ++i) {
    t.bound[i] = static_cast<std::uint64_t>(current);
    current *= kGrowth;
  }
  t.bound[N] = kInfinity;
  for (std::uint32_t i = 0; i + 1 < N; ++i) t.last_in[i] = t.bound[i + 1] - 1;
  t.last_in[N - 1] = kInfinity;

  // Slices in increasing order of their values: one walk over the bounds.
  bool consistent = true;
  std::uint32_t bucket = 0;
  for (int slice = 0; slice < kSlices; ++slice) {
    const int top = slice >> kSubBits;
    const std::uint64_t lead = (std::uint64_t{1} << kSubBits) | (slice & ((1 << kSubBits) - 1));
    // Below 2^kSubBits a slice holds at most one value (or none: then any bucket does).
    const std::uint64_t first = top >= kSubBits ? lead << (top - kSubBits) : lead >> (kSubBits - top);
    const std::uint64_t last = top >= kSubBits ? first + ((std::uint64_t{1} << (top - kSubBits)) - 1) : first;
    while (bucket + 1 < N && t.bound[bucket + 1] <= first) ++bucket;
    t.first_bucket[slice] = static_cast<std::uint16_t>(bucket);
    std::uint32_t last_bucket = bucket;
    while (last_bucket + 1 < N && t.bound[last_bucket + 1] <= last) ++last_bucket;
    if (last_bucket > bucket + 1) consistent = false;
  }
  t.consistent = consistent;
  return t;
}

}  // namespace detail

// A scale of N logarithmic buckets: bucket 0 is [0, first bound), each next bound
// is the previous times BUCKET_BASE_FACTOR, the last bucket ends at UINT64_MAX.
template <std::uint32_t N, std::uint64_t FirstBoundPs>
struct scale {
  static constexpr std::uint32_t kBuckets = N;
  static constexpr detail::tables<N> kTables = detail::make_tables<N>(static_cast<double>(FirstBoundPs));
  static_assert(kTables.consistent, "a slice of bucket_of spans more than two buckets");

  // BUCKET_TIMER_LOW of bucket i (picoseconds), i < N.
  static constexpr std::uint64_t low(std::uint32_t i) noexcept { return kTables.bound[i]; }
  // BUCKET_TIMER_HIGH of bucket i (picoseconds), i < N: the next bucket's low,
  // UINT64_MAX for the last bucket.
  static constexpr std::uint64_t high(std::uint32_t i) noexcept { return kTables.bound[i + 1]; }

  // The bucket of a duration of ps picoseconds: the largest i with low(i) <= ps.
  // Lock-free, no loop, no division, no floating point: the tables are
  // constant-initialized.
  static constexpr std::uint32_t bucket_of(std::uint64_t ps) noexcept {
    const std::uint32_t candidate = kTables.first_bucket[detail::slice_of(ps)];
    return candidate + (ps > kTables.last_in[candidate] ? 1U : 0U);
  }

  // The value MySQL reports as a quantile of the bucket counts (table_esms_by_digest.cc,
  // make_row): with T the sum of the counts, the first bucket whose running count
  // reaches ceil(T * q) (MySQL: (T * 95 + 99) / 100 for QUANTILE_95, (T * 99 + 99) / 100,
  // (T * 999 + 999) / 1000), reported as that bucket's BUCKET_TIMER_HIGH. 0 when T is 0.
  // q is clamped to [0, 1] and taken in millionths (0.95, 0.99 and 0.999 are exact);
  // q = 0 gives the high bound of the first non-empty bucket.
  static std::uint64_t quantile(const std::uint64_t* counts, double q) noexcept {
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < N; ++i) total += counts[i];
    if (total == 0) return 0;

    constexpr std::uint64_t kMillion = 1000000;
    std::uint64_t millionths = 0;  // q <= 0 or NaN
    if (q >= 1.0) {
      millionths = kMillion;
    } else if (q > 0.0) {
      millionths = static_cast<std::uint64_t>(q * 1e6 + 0.5);
    }
    // ceil(total * millionths / 10^6) without overflow: split total at 10^6.
    const std::uint64_t whole = total / kMillion;
    const std::uint64_t rest = total % kMillion;
    std::uint64_t target = whole * millionths + (rest * millionths + kMillion - 1) / kMillion;
    if (target == 0) target = 1;

    std::uint64_t running = 0;
    for (std::uint32_t i = 0; i < N; ++i) {
      running += counts[i];
      if (running >= target) return high(i);
    }
    return high(N - 1);
  }
};

// MySQL 8.0's statement scale: 450 buckets from BUCKET_BASE_TIMER, 10 us.
using statement_scale = scale<450, 10 * 1000 * 1000>;
static_assert(statement_scale::kTables.bound[1] == 10000000 && statement_scale::kTables.bound[51] == 100000000);

// The wait scale (beyond MySQL, whose histograms are for statements only): the same
// growth factor from 1 ns, so that an uncontended lock acquisition, a contended one
// and an I/O fall into different buckets: bucket 0 is [0, 1 ns), bucket 551 is
// [100 s, UINT64_MAX) (552 buckets, 50 a decade).
using wait_scale = scale<552, 1000>;
static_assert(wait_scale::kTables.bound[551] >= 99'999'000'000'000ull &&
              wait_scale::kTables.bound[551] <= 100'001'000'000'000ull);

inline constexpr std::uint32_t kBuckets = statement_scale::kBuckets;

// The statement scale's functions, as MySQL names them.
constexpr std::uint64_t bucket_low(std::uint32_t i) noexcept { return statement_scale::low(i); }
constexpr std::uint64_t bucket_high(std::uint32_t i) noexcept { return statement_scale::high(i); }
constexpr std::uint32_t bucket_of(std::uint64_t ps) noexcept { return statement_scale::bucket_of(ps); }
inline std::uint64_t quantile(const std::uint64_t* counts, double q) noexcept {
  return statement_scale::quantile(counts, q);
}

}  // namespace pfs::histogram

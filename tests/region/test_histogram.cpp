// Tests of agent/region/histogram.h: MySQL 8.0's statement histogram bounds, the
// bucket of a duration, and the reported quantiles; the wait scale from 1 ns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "agent/region/histogram.h"

namespace {

using namespace pfs::histogram;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// PFS_histogram_timers::init() (storage/perfschema/pfs_histogram.cc), at run time.
// volatile keeps the compiler from folding the loop into constants.
std::vector<std::uint64_t> mysql_bounds() {
  volatile double factor = 1.0471285480508996;
  double current = 10 * 1000 * 1000;
  std::vector<std::uint64_t> bounds(kBuckets + 1);
  bounds[0] = 0;
  for (std::uint32_t i = 1; i < kBuckets; ++i) {
    bounds[i] = static_cast<std::uint64_t>(current);
    current *= factor;
  }
  bounds[kBuckets] = kMax;
  return bounds;
}

// time_normalizer::bucket_index (pfs_timer.cc) as a plain scan: the largest i with
// bound[i] <= t.
std::uint32_t scan_bucket(std::uint64_t ps) {
  std::uint32_t bucket = 0;
  while (bucket + 1 < kBuckets && bucket_low(bucket + 1) <= ps) ++bucket;
  return bucket;
}

TEST(Histogram, BoundsAreMySQLs) {
  const auto bounds = mysql_bounds();
  for (std::uint32_t i = 0; i < kBuckets; ++i) {
    ASSERT_EQ(bucket_low(i), bounds[i]) << i;
    ASSERT_EQ(bucket_high(i), bounds[i + 1]) << i;
  }
  // Values of the same loop run in Python (IEEE doubles, truncated to integers).
  EXPECT_EQ(bucket_low(0), 0U);
  EXPECT_EQ(bucket_low(1), 10000000U);
  EXPECT_EQ(bucket_low(2), 10471285U);
  EXPECT_EQ(bucket_low(3), 10964781U);
  EXPECT_EQ(bucket_low(10), 15135612U);
  EXPECT_EQ(bucket_low(50), 95499258U);
  EXPECT_EQ(bucket_low(51), 100000000U);
  EXPECT_EQ(bucket_low(101), 1000000000U);
  EXPECT_EQ(bucket_low(200), 95499258602U);
  EXPECT_EQ(bucket_low(400), 954992586021464U);
  EXPECT_EQ(bucket_low(448), 8709635899561102U);
  EXPECT_EQ(bucket_low(449), 9120108393559408U);
  EXPECT_EQ(bucket_high(0), 10000000U);
  EXPECT_EQ(bucket_high(448), 9120108393559408U);
  EXPECT_EQ(bucket_high(449), kMax);
  for (std::uint32_t i = 1; i < kBuckets; ++i) ASSERT_LT(bucket_low(i - 1), bucket_low(i));
}

TEST(Histogram, BucketOfMatchesScanAtBoundaries) {
  EXPECT_EQ(bucket_of(0), 0U);
  EXPECT_EQ(bucket_of(1), 0U);
  EXPECT_EQ(bucket_of(kMax), kBuckets - 1);
  EXPECT_EQ(bucket_of(kMax - 1), kBuckets - 1);
  for (std::uint32_t i = 0; i < kBuckets; ++i) {
    const std::uint64_t low = bucket_low(i);
    ASSERT_EQ(bucket_of(low), i) << low;  // low bound inclusive
    ASSERT_EQ(bucket_of(low + 1), scan_bucket(low + 1)) << low;
    if (low > 0) {
      ASSERT_EQ(bucket_of(low - 1), i - 1) << low;  // high bound exclusive
      ASSERT_EQ(bucket_of(low - 1), scan_bucket(low - 1)) << low;
    }
  }
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t power = std::uint64_t{1} << bit;
    ASSERT_EQ(bucket_of(power), scan_bucket(power)) << bit;
    ASSERT_EQ(bucket_of(power - 1), scan_bucket(power - 1)) << bit;
    ASSERT_EQ(bucket_of(power + 1), scan_bucket(power + 1)) << bit;
  }
}

TEST(Histogram, BucketOfMatchesScanOnRandomValues) {
  std::mt19937_64 random(20240611);
  for (int n = 0; n < 200000; ++n) {
    // Uniform over the bit length, so that every bucket is reached.
    const int bits = static_cast<int>(random() % 65);
    const std::uint64_t ps = bits == 0 ? 0 : random() >> (64 - bits);
    ASSERT_EQ(bucket_of(ps), scan_bucket(ps)) << ps;
  }
  std::uniform_int_distribution<std::uint32_t> any_bucket(0, kBuckets - 1);
  for (int n = 0; n < 100000; ++n) {
    const std::uint32_t i = any_bucket(random);
    const std::uint64_t width = bucket_high(i) == kMax ? 1000000000 : bucket_high(i) - bucket_low(i);
    const std::uint64_t ps = bucket_low(i) + random() % width;
    ASSERT_EQ(bucket_of(ps), i) << ps;
  }
}

TEST(Histogram, BucketOfIsConstexpr) {
  static_assert(bucket_of(0) == 0);
  static_assert(bucket_of(10000000) == 1);
  static_assert(bucket_of(9999999) == 0);
  static_assert(bucket_of(kMax) == kBuckets - 1);
}

// table_esms_by_digest::make_row, verbatim arithmetic, for QUANTILE_95/99/999.
std::uint64_t mysql_quantile(const std::uint64_t* counts, std::uint64_t numerator,
                             std::uint64_t denominator) {
  std::uint64_t count_star = 0;
  for (std::uint32_t i = 0; i < kBuckets; ++i) count_star += counts[i];
  if (count_star == 0) return 0;
  const std::uint64_t target = (count_star * numerator + denominator - 1) / denominator;
  std::uint64_t count = 0;
  std::uint32_t index = 0;
  for (; index < kBuckets; ++index) {
    count += counts[index];
    if (count >= target) break;
  }
  return bucket_high(index);
}

TEST(Histogram, QuantileOfNothingIsZero) {
  std::vector<std::uint64_t> counts(kBuckets, 0);
  EXPECT_EQ(quantile(counts.data(), 0.95), 0U);
  EXPECT_EQ(quantile(counts.data(), 0.0), 0U);
  EXPECT_EQ(quantile(counts.data(), 1.0), 0U);
}

TEST(Histogram, QuantileReportsTheHighBound) {
  std::vector<std::uint64_t> counts(kBuckets, 0);
  counts[bucket_of(50'000'000)] = 1;  // one 50 us statement
  const std::uint32_t b = bucket_of(50'000'000);
  EXPECT_EQ(quantile(counts.data(), 0.95), bucket_high(b));
  EXPECT_EQ(quantile(counts.data(), 0.999), bucket_high(b));
  EXPECT_EQ(quantile(counts.data(), 0.0), bucket_high(b));

  // 100 statements: 95 in bucket 10, 4 in bucket 20, 1 in bucket 30.
  std::fill(counts.begin(), counts.end(), 0);
  counts[10] = 95;
  counts[20] = 4;
  counts[30] = 1;
  EXPECT_EQ(quantile(counts.data(), 0.95), bucket_high(10));  // 95 >= ceil(95)
  EXPECT_EQ(quantile(counts.data(), 0.96), bucket_high(20));
  EXPECT_EQ(quantile(counts.data(), 0.99), bucket_high(20));   // 99 >= ceil(99)
  EXPECT_EQ(quantile(counts.data(), 0.999), bucket_high(30));  // ceil(99.9) = 100
  EXPECT_EQ(quantile(counts.data(), 0.5), bucket_high(10));
  EXPECT_EQ(quantile(counts.data(), 1.0), bucket_high(30));
  EXPECT_EQ(quantile(counts.data(), 2.0), bucket_high(30));
  EXPECT_EQ(quantile(counts.data(), -1.0), bucket_high(10));

  // The last bucket reports UINT64_MAX, as MySQL does.
  counts[kBuckets - 1] = 1000;
  EXPECT_EQ(quantile(counts.data(), 0.95), kMax);
}

TEST(Histogram, QuantileMatchesMySQLArithmetic) {
  std::mt19937_64 random(7);
  std::vector<std::uint64_t> counts(kBuckets);
  for (int round = 0; round < 2000; ++round) {
    std::fill(counts.begin(), counts.end(), 0);
    const int filled = 1 + static_cast<int>(random() % 20);
    for (int n = 0; n < filled; ++n) {
      // Small totals exercise the rounding; large ones the overflow-free split.
      const std::uint64_t count = round % 2 == 0 ? random() % 7 : random() % 10'000'000'000ULL;
      counts[random() % kBuckets] += count;
    }
    ASSERT_EQ(quantile(counts.data(), 0.95), mysql_quantile(counts.data(), 95, 100)) << round;
    ASSERT_EQ(quantile(counts.data(), 0.99), mysql_quantile(counts.data(), 99, 100)) << round;
    ASSERT_EQ(quantile(counts.data(), 0.999), mysql_quantile(counts.data(), 999, 1000)) << round;
  }
}

// The wait scale: MySQL's growth factor from 1 ns, 50 buckets a decade, the last
// from 100 s on; its bucket_of agrees with a plain scan of its bounds.
TEST(Histogram, WaitScaleStartsAtANanosecond) {
  using W = wait_scale;
  EXPECT_EQ(W::kBuckets, 552U);
  EXPECT_EQ(W::low(0), 0U);
  EXPECT_EQ(W::high(0), 1000U);  // [0, 1 ns)
  EXPECT_EQ(W::low(1), 1000U);
  EXPECT_EQ(W::low(2), 1047U);
  EXPECT_EQ(W::low(51), 10000U);            // 10 ns
  EXPECT_EQ(W::low(201), 10000000U);        // 10 us: where MySQL's statement scale starts
  EXPECT_EQ(W::low(351), 10000000000U);     // 10 ms
  EXPECT_GE(W::low(551), 99999000000000U);  // 100 s
  EXPECT_EQ(W::high(551), kMax);
  for (std::uint32_t i = 1; i < W::kBuckets; ++i) {
    ASSERT_LT(W::low(i - 1), W::low(i)) << i;
    // The same growth as MySQL's statement buckets: 4.7 % between two bounds.
    if (i > 1) {
      ASSERT_NEAR(static_cast<double>(W::low(i)) / static_cast<double>(W::low(i - 1)), 1.0471, 0.002) << i;
    }
  }
  std::mt19937_64 random(20261128);
  for (int n = 0; n < 200000; ++n) {
    const int bits = static_cast<int>(random() % 65);
    const std::uint64_t ps = bits == 0 ? 0 : random() >> (64 - bits);
    std::uint32_t scan = 0;
    while (scan + 1 < W::kBuckets && W::low(scan + 1) <= ps) ++scan;
    ASSERT_EQ(W::bucket_of(ps), scan) << ps;
  }
  // An uncontended lock (tens of ns), a contended one (tens of us) and a disk read
  // (ms) fall into different buckets; MySQL's statement scale puts the first two in
  // its bucket 0.
  EXPECT_LT(W::bucket_of(30000), W::bucket_of(40000000));
  EXPECT_LT(W::bucket_of(40000000), W::bucket_of(2000000000));
  EXPECT_EQ(bucket_of(30000), bucket_of(9000000));
  std::vector<std::uint64_t> counts(W::kBuckets, 0);
  counts[W::bucket_of(25000)] = 99;
  counts[W::bucket_of(2000000000)] = 1;
  EXPECT_EQ(W::quantile(counts.data(), 0.95), W::high(W::bucket_of(25000)));
  EXPECT_EQ(W::quantile(counts.data(), 0.999), W::high(W::bucket_of(2000000000)));
}

}  // namespace

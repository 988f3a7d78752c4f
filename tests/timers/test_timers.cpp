// Tests of the timers library: names, reads, measurement, CYCLE calibration and trust
// rule, and the picosecond converters.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "timers/timer.h"
#include "timers/timer_detail.h"

namespace {

using namespace pfs::timers;
using namespace std::chrono_literals;

constexpr timer_kind kAllTimers[] = {
    timer_kind::cycle,       timer_kind::nanosecond, timer_kind::microsecond,
    timer_kind::millisecond, timer_kind::tick,       timer_kind::thread_cpu,
};

std::string name_of(timer_kind kind) { return std::string(timer_name(kind)); }

std::uint64_t monotonic_ns() { return read_clock(CLOCK_MONOTONIC); }

// Runs first (tests run in declaration order) so that the first info() calls race.
TEST(TimerInfo, ConcurrentFirstUseIsConsistent) {
  constexpr int kThreads = 4;
  std::vector<std::vector<const timer_info*>> seen(kThreads);
  std::vector<timer_kind> wait_timer(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &seen, &wait_timer] {
      for (int i = 0; i < 6; ++i) {
        const timer_kind kind = kAllTimers[(i + t) % 6];
        seen[t].push_back(&info(kind));
      }
      wait_timer[t] = default_wait_timer();
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(wait_timer[t], wait_timer[0]);
    for (int i = 0; i < 6; ++i) {
      const timer_kind kind = kAllTimers[(i + t) % 6];
      EXPECT_EQ(seen[t][i], &info(kind));
      EXPECT_EQ(seen[t][i]->kind, kind);
    }
  }
}

TEST(TimerNames, RoundTrip) {
  for (timer_kind kind : kAllTimers) {
    const std::string_view name = timer_name(kind);
    EXPECT_FALSE(name.empty());
    EXPECT_EQ(timer_from_name(name), kind) << name;
  }
  EXPECT_EQ(timer_name(timer_kind::cycle), "CYCLE");
  EXPECT_EQ(timer_name(timer_kind::nanosecond), "NANOSECOND");
  EXPECT_EQ(timer_name(timer_kind::microsecond), "MICROSECOND");
  EXPECT_EQ(timer_name(timer_kind::millisecond), "MILLISECOND");
  EXPECT_EQ(timer_name(timer_kind::tick), "TICK");
  EXPECT_EQ(timer_name(timer_kind::thread_cpu), "THREAD_CPU");
  EXPECT_EQ(timer_name(timer_kind::none), "");
  EXPECT_EQ(timer_name(static_cast<timer_kind>(42)), "");
}

TEST(TimerNames, LookupIsCaseInsensitiveAndExact) {
  EXPECT_EQ(timer_from_name("cycle"), timer_kind::cycle);
  EXPECT_EQ(timer_from_name("Nanosecond"), timer_kind::nanosecond);
  EXPECT_EQ(timer_from_name("microSECOND"), timer_kind::microsecond);
  EXPECT_EQ(timer_from_name("millisecond"), timer_kind::millisecond);
  EXPECT_EQ(timer_from_name("tIcK"), timer_kind::tick);
  EXPECT_EQ(timer_from_name("thread_cpu"), timer_kind::thread_cpu);
  for (const char* bad : {"", "CYCLES", "CYCL", "NANO", "THREAD CPU", "THREAD-CPU", " TICK", "TICK "}) {
    EXPECT_EQ(timer_from_name(bad), timer_kind::none) << "'" << bad << "'";
  }
  EXPECT_EQ(timer_from_name(std::string_view("TICK\0", 5)), timer_kind::none);
}

TEST(TimerInfo, FixedFrequenciesAndAvailability) {
  EXPECT_EQ(info(timer_kind::nanosecond).frequency, 1e9);
  EXPECT_EQ(info(timer_kind::microsecond).frequency, 1e6);
  EXPECT_EQ(info(timer_kind::millisecond).frequency, 1e3);
  EXPECT_EQ(info(timer_kind::tick).frequency, static_cast<double>(sysconf(_SC_CLK_TCK)));
  EXPECT_EQ(info(timer_kind::thread_cpu).frequency, 1e9);
  for (timer_kind kind : kAllTimers) {
    const timer_info& ti = info(kind);
    EXPECT_EQ(ti.kind, kind);
    ASSERT_NE(ti.unavailable_reason, nullptr);
    if (ti.available) {
      EXPECT_STREQ(ti.unavailable_reason, "") << name_of(kind);
      EXPECT_GT(ti.frequency, 0) << name_of(kind);
    } else {
      EXPECT_STRNE(ti.unavailable_reason, "") << name_of(kind);
      EXPECT_EQ(ti.frequency, 0) << name_of(kind);
    }
  }
  // On Linux everything but CYCLE is always there.
  for (timer_kind kind : {timer_kind::nanosecond, timer_kind::microsecond, timer_kind::millisecond,
                          timer_kind::tick, timer_kind::thread_cpu}) {
    EXPECT_TRUE(info(kind).available) << name_of(kind) << ": " << info(kind).unavailable_reason;
  }
  const timer_info& none = info(timer_kind::none);
  EXPECT_FALSE(none.available);
  EXPECT_EQ(none.kind, timer_kind::none);
}

TEST(TimerInfo, CycleVerdictMatchesTheMachine) {
  const timer_info& ti = info(timer_kind::cycle);
#if defined(__x86_64__)
  const detail::cycle_decision d = detail::decide_cycle_availability(
      detail::tsc_invariant(), detail::current_clocksource(), std::getenv(detail::kDisableCycleEnv));
  EXPECT_EQ(ti.available, d.available) << ti.unavailable_reason;
  if (!d.available) {
    EXPECT_EQ(std::string(ti.unavailable_reason), d.reason);
  } else {
    EXPECT_EQ(ti.needs_rate_checks, !d.kernel_vouches);
  }
#endif
  EXPECT_EQ(default_wait_timer(), ti.available ? timer_kind::cycle : timer_kind::nanosecond);
  if (ti.available) {
    EXPECT_GT(ti.frequency, 1e6);  // no real cycle counter runs below 1 MHz
    EXPECT_LT(ti.frequency, 1e11);
  }
}

TEST(TimerInfo, ResolutionIsSane) {
  for (timer_kind kind : kAllTimers) {
    const timer_info& ti = info(kind);
    if (!ti.available) continue;
    EXPECT_GE(ti.resolution, 1u) << name_of(kind);
  }
  EXPECT_EQ(info(timer_kind::millisecond).resolution, 1u);
  EXPECT_EQ(info(timer_kind::microsecond).resolution, 1u);
  EXPECT_EQ(info(timer_kind::tick).resolution, 1u);  // one tick = 1/CLK_TCK s
  EXPECT_LE(info(timer_kind::nanosecond).resolution, 1000u);
  if (info(timer_kind::cycle).available) {
    EXPECT_LE(info(timer_kind::cycle).resolution, 1000u);
  }
  // A bounded wait on a timer that never moves falls back to 1.
  EXPECT_EQ(detail::measure_resolution(timer_kind::none, 5ms), 1u);
}

TEST(TimerInfo, OverheadIsPositiveAndOrdered) {
  for (timer_kind kind : kAllTimers) {
    const timer_info& ti = info(kind);
    if (ti.available) {
      EXPECT_GE(ti.overhead, 1u) << name_of(kind);
    } else {
      EXPECT_EQ(ti.overhead, 0u) << name_of(kind);
    }
  }
  // The portable (ns-based) path is compiled everywhere; check it gives sane figures.
  const std::uint64_t portable_cycle = detail::measure_overhead_portable(timer_kind::cycle);
  const std::uint64_t portable_cpu = detail::measure_overhead_portable(timer_kind::thread_cpu);
  EXPECT_GE(portable_cycle, 1u);
  EXPECT_GT(portable_cpu, portable_cycle);
  EXPECT_GT(detail::estimate_cpu_hz(), 1e8);
  if (!info(timer_kind::cycle).available)
    GTEST_SKIP() << "CYCLE unavailable: " << info(timer_kind::cycle).unavailable_reason;
  EXPECT_GT(info(timer_kind::thread_cpu).overhead, info(timer_kind::cycle).overhead);
}

class TimerMonotonic : public ::testing::TestWithParam<timer_kind> {};

TEST_P(TimerMonotonic, ConsecutiveReadsNeverDecrease) {
  const timer_kind kind = GetParam();
  if (!info(kind).available) GTEST_SKIP() << info(kind).unavailable_reason;
  // System calls (TICK, THREAD_CPU) cost ~0.5 us here: fewer reads for them.
  const int reads = (kind == timer_kind::tick || kind == timer_kind::thread_cpu) ? 20000 : 300000;
  std::uint64_t prev = read(kind);
  std::uint64_t first = prev;
  int decreases = 0;
  for (int i = 0; i < reads; ++i) {
    const std::uint64_t cur = read(kind);
    if (cur < prev) {
      ++decreases;
      ADD_FAILURE() << name_of(kind) << " went back from " << prev << " to " << cur << " at read " << i;
      if (decreases > 3) break;
    }
    prev = cur;
  }
  EXPECT_EQ(decreases, 0);
  EXPECT_GE(prev, first);
}

INSTANTIATE_TEST_SUITE_P(AllTimers, TimerMonotonic, ::testing::ValuesIn(kAllTimers),
                         [](const ::testing::TestParamInfo<timer_kind>& p) { return name_of(p.param); });

// An independent (CLOCK_MONOTONIC_RAW, counter) pair: the tightest of 16 brackets.
struct raw_pair {
  long double ns;
  std::uint64_t counter;
  std::uint64_t gap;
};
raw_pair tight_raw_pair() {
  raw_pair best{0, 0, std::numeric_limits<std::uint64_t>::max()};
  for (int i = 0; i < 16; ++i) {
    timespec a{}, b{};
    clock_gettime(CLOCK_MONOTONIC_RAW, &a);
    const std::uint64_t c = read_cycle();
    clock_gettime(CLOCK_MONOTONIC_RAW, &b);
    const long double na = static_cast<long double>(a.tv_sec) * 1e9L + static_cast<long double>(a.tv_nsec);
    const long double nb = static_cast<long double>(b.tv_sec) * 1e9L + static_cast<long double>(b.tv_nsec);
    if (nb < na) continue;
    const auto gap = static_cast<std::uint64_t>(nb - na);
    if (gap < best.gap) best = {(na + nb) / 2, c, gap};
  }
  return best;
}

TEST(TimerCycle, FrequencyWithin100PpmOfRawClock) {
  const timer_info& ti = info(timer_kind::cycle);
  if (!ti.available) GTEST_SKIP() << "CYCLE unavailable: " << ti.unavailable_reason;
  const raw_pair p0 = tight_raw_pair();
  std::this_thread::sleep_for(200ms);
  const raw_pair p1 = tight_raw_pair();
  ASSERT_GT(p1.ns, p0.ns);
  ASSERT_GT(p1.counter, p0.counter);
  const long double reference = static_cast<long double>(p1.counter - p0.counter) / (p1.ns - p0.ns) * 1e9L;
  const double ppm =
      static_cast<double>((static_cast<long double>(ti.frequency) - reference) / reference * 1e6L);
  RecordProperty("cycle_error_ppm", std::to_string(ppm));
  EXPECT_LT(std::fabs(ppm), 100.0) << "calibrated " << ti.frequency << " Hz, reference "
                                   << static_cast<double>(reference) << " Hz";
}

TEST(TimerCycle, CalibrationReportsItsUncertainty) {
#if defined(__x86_64__) || defined(__aarch64__)
  const detail::cycle_calibration cal = detail::calibrate_cycle(5ms);
  ASSERT_GT(cal.frequency, 0);
  EXPECT_GE(cal.elapsed_ns, 5000000u);
  EXPECT_GE(cal.uncertainty_ppm, 0);
  const detail::clock_pair p = detail::tightest_cycle_pair(16);
  EXPECT_GT(p.ns, 0u);
  EXPECT_LT(p.gap_ns, 1000000u);
#else
  GTEST_SKIP() << "no cycle counter";
#endif
}

// The slack of a timer read that quantizes to `resolution` units, in picoseconds.
double resolution_ps(const timer_info& ti) {
  return static_cast<double>(ti.resolution) * 1e12 / ti.frequency;
}

class TimerInterval : public ::testing::TestWithParam<timer_kind> {};

TEST_P(TimerInterval, SleepOf20msConvertsToTheRightPicoseconds) {
  const timer_kind kind = GetParam();
  const timer_info& ti = info(kind);
  if (!ti.available) GTEST_SKIP() << ti.unavailable_reason;
  const pico_converter conv = make_converter(ti.frequency, read(kind));
  const std::uint64_t ref0 = monotonic_ns();
  const std::uint64_t t0 = read(kind);
  std::this_thread::sleep_for(20ms);
  const std::uint64_t t1 = read(kind);
  const std::uint64_t ref1 = monotonic_ns();
  ASSERT_GE(t1, t0);
  const double expected_ps = static_cast<double>(ref1 - ref0) * 1000.0;
  const double got_ps = static_cast<double>(conv.delta_to_pico(t1 - t0));
  // TICK counts kernel jiffies: besides its 10 ms quantization, the jiffy count may lag
  // the continuous clock by up to one more tick.
  const double quanta = kind == timer_kind::tick ? 2.0 : 1.0;
  const double tolerance = quanta * resolution_ps(ti) + 0.01 * expected_ps;
  EXPECT_NEAR(got_ps, expected_ps, tolerance) << name_of(kind);
  // to_pico against the baseline agrees with delta_to_pico up to rounding.
  const double via_base = static_cast<double>(conv.to_pico(t1)) - static_cast<double>(conv.to_pico(t0));
  EXPECT_NEAR(via_base, got_ps, 2.0) << name_of(kind);
}

INSTANTIATE_TEST_SUITE_P(WallTimers, TimerInterval,
                         ::testing::Values(timer_kind::cycle, timer_kind::nanosecond, timer_kind::microsecond,
                                           timer_kind::millisecond, timer_kind::tick),
                         [](const ::testing::TestParamInfo<timer_kind>& p) { return name_of(p.param); });

std::uint64_t rusage_thread_ns() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  const auto us = [](const timeval& tv) {
    return static_cast<std::uint64_t>(tv.tv_sec) * 1000000u + static_cast<std::uint64_t>(tv.tv_usec);
  };
  return (us(ru.ru_utime) + us(ru.ru_stime)) * 1000u;
}

TEST(TimerInterval, ThreadCpuMeasuresA20msBusyLoop) {
  const timer_info& ti = info(timer_kind::thread_cpu);
  if (!ti.available) GTEST_SKIP() << ti.unavailable_reason;
  const pico_converter conv = make_converter(ti.frequency, read(timer_kind::thread_cpu));
  const std::uint64_t wall0 = monotonic_ns();
  const std::uint64_t ru0 = rusage_thread_ns();
  const std::uint64_t c0 = read(timer_kind::thread_cpu);
  std::uint64_t spins = 0;
  while (monotonic_ns() - wall0 < 20000000u) ++spins;
  const std::uint64_t c1 = read(timer_kind::thread_cpu);
  const std::uint64_t ru1 = rusage_thread_ns();
  const std::uint64_t wall1 = monotonic_ns();
  ASSERT_GT(spins, 0u);
  const double cpu_ps = static_cast<double>(conv.delta_to_pico(c1 - c0));
  const double wall_ps = static_cast<double>(wall1 - wall0) * 1000.0;
  const double rusage_ps = static_cast<double>(ru1 - ru0) * 1000.0;
  // CPU time never exceeds wall time; on a busy machine the thread may lose the CPU, so
  // the lower bound is loose. getrusage (us resolution, same kernel accounting) agrees.
  EXPECT_LE(cpu_ps, wall_ps * 1.01 + 1e9);
  EXPECT_GE(cpu_ps, 0.2 * wall_ps);
  EXPECT_NEAR(cpu_ps, rusage_ps, 0.1 * rusage_ps + 2e9);  // 2 ms of accounting slack
}

// Exact picoseconds for `delta` units of a timer of frequency f, as long double (the
// error of this reference is ~1e-19 relative, or exact where f is an integer).
long double exact_ps(std::uint64_t delta, double f) {
  if (f == std::floor(f) && f >= 1 && f < 0x1p63) {
    const auto fi = static_cast<std::uint64_t>(f);
    const uint128 num = static_cast<uint128>(delta) * 1000000000000u;
    const uint128 q = num / fi;
    const uint128 r = num % fi;
    return static_cast<long double>(q) + static_cast<long double>(r) / static_cast<long double>(fi);
  }
  return static_cast<long double>(delta) * (1e12L / static_cast<long double>(f));
}

TEST(TimerConverter, ErrorBoundAndOverflowHorizon) {
  constexpr std::uint64_t kDay = 86400;
  const double frequencies[] = {1e2, 1e3, 1e6, 1e9, 2.596146e9, 5e9, 3.999999e9,
                                // calibrated CYCLE values are fractional: the long double path
                                2596145812.375, 1e9 / 3.0, 33.333};
  std::mt19937_64 rng(12345);
  for (const double f : frequencies) {
    SCOPED_TRACE("frequency " + std::to_string(f));
    const pico_converter c = make_converter(f, 0);
    ASSERT_GT(c.mult, 0u);
    ASSERT_LT(c.mult, 1ull << 63);
    ASSERT_LE(c.shift, 63u);
    // Largest shift: one more bit would not fit in 63 bits.
    if (c.shift < 63) {
      EXPECT_GE(c.mult, 1ull << 62);
    }
    const long double ratio = 1e12L / static_cast<long double>(f);
    const long double mult_error =
        std::fabs(static_cast<long double>(c.mult) / std::ldexp(ratio, static_cast<int>(c.shift)) - 1);
    EXPECT_LT(static_cast<double>(mult_error), 1e-12);

    const auto horizon = static_cast<std::uint64_t>(std::ceil(static_cast<long double>(f) * 200 * kDay));
    std::vector<std::uint64_t> deltas = {0, 1, 2, 3, 7, 999, 1000, 1001, 123456789, horizon / 2, horizon};
    for (const std::uint64_t unit : {std::uint64_t{1}, kDay, 200 * kDay}) {
      deltas.push_back(static_cast<std::uint64_t>(f * static_cast<double>(unit)));
    }
    std::uniform_real_distribution<double> log_delta(0.0, std::log2(static_cast<double>(horizon)));
    for (int i = 0; i < 2000; ++i) deltas.push_back(static_cast<std::uint64_t>(std::exp2(log_delta(rng))));

    for (const std::uint64_t delta : deltas) {
      if (delta > horizon) continue;
      // No overflow: the 128-bit product shifted down fits in 64 bits.
      const uint128 product = static_cast<uint128>(delta) * c.mult;
      ASSERT_EQ((product >> c.shift) >> 64, 0u) << "delta " << delta;
      const std::uint64_t got = c.delta_to_pico(delta);
      const long double want = exact_ps(delta, f);
      const long double err = std::fabs(static_cast<long double>(got) - want);
      // The result is truncated to whole picoseconds: at most 1 ps off, plus the
      // relative error of mult (< 1e-9, in fact ~1e-19).
      ASSERT_LE(static_cast<double>(err), 1.0 + 1e-9 * static_cast<double>(want)) << "delta " << delta;
      if (want >= 1e6L) {
        ASSERT_LT(static_cast<double>(err / want), 1e-6) << "delta " << delta;
      }
    }
    // 200 days converts to 200 days of picoseconds (1.728e19 < 2^64).
    const std::uint64_t two_hundred_days = c.delta_to_pico(horizon);
    EXPECT_NEAR(static_cast<double>(two_hundred_days), 200.0 * kDay * 1e12, 200.0 * kDay * 1e12 * 1e-6);
  }
}

TEST(TimerConverter, ExactRatiosAreExact) {
  struct exact_case {
    double frequency;
    std::uint64_t ps_per_unit;
  };
  const long tck = sysconf(_SC_CLK_TCK);
  ASSERT_GT(tck, 0);
  const exact_case cases[] = {
      {1e9, 1000u},
      {1e6, 1000000u},
      {1e3, 1000000000u},
      {1e2, 10000000000u},
      {static_cast<double>(tck), 1000000000000u / static_cast<std::uint64_t>(tck)},
      {5e9, 200u},
  };
  for (const exact_case& e : cases) {
    const pico_converter c = make_converter(e.frequency, 0);
    EXPECT_EQ(c.mult, e.ps_per_unit << c.shift) << e.frequency;
    const std::uint64_t horizon = static_cast<std::uint64_t>(e.frequency) * 200u * 86400u;
    for (const std::uint64_t delta : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{12345}, horizon}) {
      EXPECT_EQ(c.delta_to_pico(delta), delta * e.ps_per_unit) << e.frequency << " delta " << delta;
    }
  }
  // 200 days at 5 GHz: 8.64e16 cycles are 1.728e19 ps exactly, still below 2^64.
  const pico_converter c5 = make_converter(5e9, 0);
  EXPECT_EQ(c5.delta_to_pico(86400000000000000ull), 17280000000000000000ull);
}

TEST(TimerConverter, BaselineAndBelowBase) {
  const pico_converter c = make_converter(1e9, 1000);
  EXPECT_EQ(c.base, 1000u);
  EXPECT_EQ(c.to_pico(1000), 0u);
  EXPECT_EQ(c.to_pico(1001), 1000u);
  EXPECT_EQ(c.to_pico(999), 0u);  // before the baseline
  EXPECT_EQ(c.to_pico(0), 0u);
}

TEST(TimerConverter, UnavailableConvertsToZero) {
  for (const double f :
       {0.0, -1.0, -1e9, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    const pico_converter c = make_converter(f, 5);
    EXPECT_EQ(c.mult, 0u) << f;
    EXPECT_EQ(c.to_pico(123456789), 0u) << f;
    EXPECT_EQ(c.delta_to_pico(~0ull), 0u) << f;
  }
  // An unavailable timer's description yields the same converter.
  for (timer_kind kind : kAllTimers) {
    const timer_info& ti = info(kind);
    if (ti.available) continue;
    const pico_converter c = make_converter(ti.frequency, read(kind));
    EXPECT_EQ(c.to_pico(read(kind) + 1000000), 0u) << name_of(kind);
  }
}

TEST(TimerConverter, DisabledCycleMeasuresUnavailableAndConvertsToZero) {
  const char* old = std::getenv(detail::kDisableCycleEnv);
  const std::string saved = old ? old : "";
  ASSERT_EQ(setenv(detail::kDisableCycleEnv, "1", 1), 0);
  const timer_info ti = measure(timer_kind::cycle);
  if (old) {
    setenv(detail::kDisableCycleEnv, saved.c_str(), 1);
  } else {
    unsetenv(detail::kDisableCycleEnv);
  }
  EXPECT_FALSE(ti.available);
  EXPECT_STREQ(ti.unavailable_reason, "disabled by PFS_TIMER_DISABLE_CYCLE");
  EXPECT_EQ(ti.frequency, 0);
  EXPECT_EQ(ti.overhead, 0u);
  const pico_converter c = make_converter(ti.frequency, read_cycle());
  EXPECT_EQ(c.mult, 0u);
  EXPECT_EQ(c.to_pico(read_cycle() + 1000000), 0u);
}

TEST(CycleAvailability, DecisionFunction) {
  using detail::decide_cycle_availability;
  auto d = decide_cycle_availability(true, "tsc", nullptr);
  EXPECT_TRUE(d.available);
  EXPECT_TRUE(d.kernel_vouches);
  EXPECT_EQ(d.reason, "");
  d = decide_cycle_availability(true, "tsc\n", nullptr);  // as read from sysfs
  EXPECT_TRUE(d.available);
  EXPECT_TRUE(d.kernel_vouches);

  d = decide_cycle_availability(false, "tsc", nullptr);
  EXPECT_FALSE(d.available);
  EXPECT_EQ(d.reason, "TSC is not invariant");

  // An invariant TSC under another clock source (a VM's kvm-clock): CYCLE, with the
  // agent checking the rate itself (cycle_watch.h).
  for (const char* source : {"hpet\n", "kvm-clock", "xen", "hyperv_clocksource_tsc_page", "", "tsc2"}) {
    d = decide_cycle_availability(true, source, nullptr);
    EXPECT_TRUE(d.available) << source;
    EXPECT_FALSE(d.kernel_vouches) << source;
    EXPECT_EQ(d.reason, "") << source;
  }

  d = decide_cycle_availability(true, "tsc", "1");
  EXPECT_FALSE(d.available);
  EXPECT_EQ(d.reason, "disabled by PFS_TIMER_DISABLE_CYCLE");
  d = decide_cycle_availability(false, "hpet", "yes");  // the override wins
  EXPECT_EQ(d.reason, "disabled by PFS_TIMER_DISABLE_CYCLE");
  d = decide_cycle_availability(true, "kvm-clock", "1");
  EXPECT_FALSE(d.available);
  // Unset-like values do not disable.
  EXPECT_TRUE(decide_cycle_availability(true, "tsc", "").available);
  EXPECT_TRUE(decide_cycle_availability(true, "tsc", "0").available);
}

TEST(CycleAvailability, InternedReasonsAreStable) {
  const char* a = detail::intern("kernel clock source is hpet, not tsc");
  const char* b = detail::intern(std::string("kernel clock source is hpet") + ", not tsc");
  EXPECT_EQ(a, b);
  EXPECT_STREQ(a, "kernel clock source is hpet, not tsc");
  EXPECT_NE(detail::intern("x"), a);
}

}  // namespace

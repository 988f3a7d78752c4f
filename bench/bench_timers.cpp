// Benchmarks of the timers: the cost of one read of each timer (BM_Timer/<NAME>), the
// accuracy of the CYCLE calibration (BM_TimerCalibration) and the cost of one check
// of the agent's CYCLE watch (BM_CycleRateCheck).
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <utility>

#include "timers/cycle_watch.h"
#include "timers/timer.h"
#include "timers/timer_detail.h"

namespace {

using namespace pfs::timers;

// ns per read of one timer.
void BM_Timer(benchmark::State& state, timer_kind kind) {
  const timer_info& ti = info(kind);  // measured once, outside the timed loop
  if (!ti.available) state.SetLabel(std::string("unavailable: ") + ti.unavailable_reason);
  for (auto _ : state) benchmark::DoNotOptimize(read(kind));
}

// An independent reference for the counter's frequency: the tightest of 32
// (CLOCK_MONOTONIC_RAW, counter, CLOCK_MONOTONIC_RAW) brackets at each end of 200 ms.
long double reference_cycle_hz() {
  const auto pair = [] {
    long double best_ns = 0, best_gap = std::numeric_limits<long double>::infinity();
    std::uint64_t best_counter = 0;
    for (int i = 0; i < 32; ++i) {
      timespec a{}, b{};
      clock_gettime(CLOCK_MONOTONIC_RAW, &a);
      const std::uint64_t c = read_cycle();
      clock_gettime(CLOCK_MONOTONIC_RAW, &b);
      const long double na = static_cast<long double>(a.tv_sec) * 1e9L + static_cast<long double>(a.tv_nsec);
      const long double nb = static_cast<long double>(b.tv_sec) * 1e9L + static_cast<long double>(b.tv_nsec);
      if (nb >= na && nb - na < best_gap) {
        best_gap = nb - na;
        best_ns = (na + nb) / 2;
        best_counter = c;
      }
    }
    return std::pair<long double, std::uint64_t>(best_ns, best_counter);
  };
  const auto p0 = pair();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto p1 = pair();
  if (p1.first <= p0.first || p1.second <= p0.second) return 0;
  return static_cast<long double>(p1.second - p0.second) / (p1.first - p0.first) * 1e9L;
}

// Mean |calibrated - reference| / reference in ppm over calibrations made with `wait`.
struct calibration_stats {
  long double mean_hz = 0, mean_abs_ppm = 0, worst_ppm = 0;
  std::int64_t n = 0;
  void add(double hz, long double reference) {
    const long double ppm = std::fabs((static_cast<long double>(hz) - reference) / reference * 1e6L);
    mean_hz += (static_cast<long double>(hz) - mean_hz) / static_cast<long double>(n + 1);
    mean_abs_ppm += (ppm - mean_abs_ppm) / static_cast<long double>(n + 1);
    worst_ppm = std::max(worst_ppm, ppm);
    ++n;
  }
};

// One CYCLE calibration (20 ms window) per iteration, checked against an independent
// 200 ms CLOCK_MONOTONIC_RAW measurement. Counters: freq_mhz, the mean calibrated
// frequency; error_ppm, the mean |calibrated - reference| / reference; worst_ppm.
//
// Google Benchmark settles the iteration count on CPU time, and a sleeping calibration
// uses almost none (it would be run ~1100 times per repetition), so the timed loop
// waits by spinning; the bracketing at both ends is the same code measure() runs.
// sleep_error_ppm is the same figure for 5 calibrations exactly as measure() makes
// them (sleeping), done once per process outside the timed loop.
void BM_TimerCalibration(benchmark::State& state) {
  static const long double reference = reference_cycle_hz();
  if (!(reference > 0)) {
    state.SkipWithError("no cycle counter or the reference measurement failed");
    return;
  }
  static const calibration_stats sleeping = [] {
    calibration_stats s;
    for (int i = 0; i < 5; ++i) {
      const detail::cycle_calibration cal = detail::calibrate_cycle();
      if (cal.frequency > 0) s.add(cal.frequency, reference);
    }
    return s;
  }();
  if (!info(timer_kind::cycle).available) {
    state.SetLabel(std::string("CYCLE unavailable: ") + info(timer_kind::cycle).unavailable_reason);
  }
  calibration_stats spinning;
  for (auto _ : state) {
    const detail::cycle_calibration cal =
        detail::calibrate_cycle(std::chrono::milliseconds(20), detail::calibration_wait::spin);
    if (!(cal.frequency > 0)) {
      state.SkipWithError("calibration failed");
      break;
    }
    spinning.add(cal.frequency, reference);
  }
  if (spinning.n == 0) return;
  state.counters["freq_mhz"] = static_cast<double>(spinning.mean_hz / 1e6L);
  state.counters["error_ppm"] = static_cast<double>(spinning.mean_abs_ppm);
  state.counters["worst_ppm"] = static_cast<double>(spinning.worst_ppm);
  state.counters["sleep_error_ppm"] = static_cast<double>(sleeping.mean_abs_ppm);
  state.counters["reference_mhz"] = static_cast<double>(reference / 1e6L);
}

// One check of the agent's CYCLE watch (agent_timer_watch.cpp): a tight pair and the
// rate decision, what its thread does every PFS_TIMER_WATCH_INTERVAL_MS. drift_ppm is
// the start-up calibration against one 1 s check on this machine (what the watch
// would see; it recalibrates above 20 ppm).
void BM_CycleRateCheck(benchmark::State& state) {
  const timer_info& ti = info(timer_kind::cycle);
  if (!ti.available) {
    state.SkipWithError("CYCLE unavailable");
    return;
  }
  static const double drift_ppm = [&ti] {
    cycle_rate_watch w(ti.frequency, detail::good_cycle_pair());
    std::this_thread::sleep_for(std::chrono::seconds(1));
    return w.observe(detail::good_cycle_pair()).drift_ppm;
  }();
  cycle_rate_watch watch(ti.frequency, detail::good_cycle_pair());
  for (auto _ : state) benchmark::DoNotOptimize(watch.observe(detail::good_cycle_pair()));
  state.counters["drift_ppm"] = drift_ppm;
  state.SetLabel(ti.needs_rate_checks ? "the agent checks the rate here"
                                      : "the kernel vouches for the rate here");
}

[[maybe_unused]] const bool registered = [] {
  for (const timer_kind kind : {timer_kind::cycle, timer_kind::nanosecond, timer_kind::microsecond,
                                timer_kind::millisecond, timer_kind::tick, timer_kind::thread_cpu}) {
    const std::string name = "BM_Timer/" + std::string(timer_name(kind));
    benchmark::RegisterBenchmark(name.c_str(), BM_Timer, kind);
  }
  benchmark::RegisterBenchmark("BM_TimerCalibration", BM_TimerCalibration)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_CycleRateCheck", BM_CycleRateCheck)->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace

// The rate check of cycle_watch.h.
#include "timers/cycle_watch.h"

#include <cmath>

namespace pfs::timers {

namespace {
// Pairs closer than this measure a rate too coarsely to compare (two 2 us gaps over
// 50 ms are 40 ppm).
constexpr std::uint64_t kMinIntervalNs = 50'000'000;
}  // namespace

cycle_rate_watch::outcome cycle_rate_watch::observe(const detail::clock_pair& now) {
  outcome o;
  if (now.ns <= last_.ns || now.counter <= last_.counter) {  // a clock went back: start again
    last_ = now;
    return o;
  }
  const std::uint64_t dns = now.ns - last_.ns;
  if (dns < kMinIntervalNs) return o;  // keep the older pair: a longer interval next time
  // Each pair's instant is known to within half its gap; a check that cannot tell the
  // threshold apart waits for a better pair (the older one stays).
  const double uncertainty_ppm =
      static_cast<double>(last_.gap_ns + now.gap_ns) / 2.0 / static_cast<double>(dns) * 1e6;
  if (uncertainty_ppm > threshold_ppm_ / 2) return o;
  const long double measured =
      static_cast<long double>(now.counter - last_.counter) / static_cast<long double>(dns) * 1e9L;
  const double drift = static_cast<double>((measured / static_cast<long double>(frequency_) - 1.0L) * 1e6L);
  if (!std::isfinite(drift) || std::fabs(drift) > kAbsurdPpm) {
    last_ = now;
    return o;
  }
  o.checked = true;
  o.measured_hz = static_cast<double>(measured);
  o.drift_ppm = drift;
  if (std::fabs(drift) > threshold_ppm_) {
    o.recalibrate = true;
    o.from_counter = last_.counter;
    frequency_ = o.measured_hz;
  }
  last_ = now;
  return o;
}

}  // namespace pfs::timers

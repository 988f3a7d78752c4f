// Keeping CYCLE honest where the kernel does not vouch for the TSC's rate.
//
// On a virtual machine whose kernel clock source is kvm-clock (xen, hyperv) the TSC
// is invariant but the guest may move to a host of another TSC frequency without TSC
// scaling: the counter then runs at a new rate and a calibration taken at start-up
// converts every value wrongly. The agent checks the rate off the event path: every
// few seconds it takes a tight (CLOCK_MONOTONIC_RAW, counter) pair and compares the
// counter's rate since the previous pair with the frequency in force. A departure of
// more than the threshold starts a new calibration epoch (region_layout.h,
// cycle_epoch), in force from the previous pair on: the last moment the old rate was
// known to hold.
//
// This class is the decision only, fed with pairs, so that tests can inject clocks
// and rate changes; the agent's thread (agent_timer_watch.cpp) feeds it real pairs.
#pragma once

#include <cstdint>

#include "timers/timer_detail.h"

namespace pfs::timers {

class cycle_rate_watch {
 public:
  // Default threshold: well above what two 2 us pairs a few seconds apart can
  // measure (about 1 ppm), well below the 100 ppm a migration must be corrected for.
  static constexpr double kDefaultThresholdPpm = 20;
  // A rate more than 10% away is not a rate change (a paused guest, a TSC reset):
  // the pair is refused and checking starts again from it.
  static constexpr double kAbsurdPpm = 100000;

  cycle_rate_watch(double frequency_hz, const detail::clock_pair& first,
                   double threshold_ppm = kDefaultThresholdPpm)
      : frequency_(frequency_hz), threshold_ppm_(threshold_ppm), last_(first) {}

  struct outcome {
    bool checked = false;            // the pair measured a rate (else: refused, or too close)
    double measured_hz = 0;          // the counter's rate since the previous pair
    double drift_ppm = 0;            // measured against the frequency in force
    bool recalibrate = false;        // |drift| above the threshold: measured_hz is now in force
    std::uint64_t from_counter = 0;  // ... from this counter value (the previous pair's)
  };
  outcome observe(const detail::clock_pair& now);

  double frequency() const { return frequency_; }

 private:
  double frequency_;
  double threshold_ppm_;
  detail::clock_pair last_;
};

}  // namespace pfs::timers

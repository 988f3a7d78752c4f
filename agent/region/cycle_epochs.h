// CYCLE's calibration epochs (region_layout.h, cycle_epoch): the provider's CYCLE
// watch publishes one when the TSC's rate changed; every conversion of an absolute
// CYCLE value (TIMER_START, TIMER_END, trace and statement times) uses the epoch in
// force when the value was taken, in the provider and in every reader alike.
//
// Publication is a seqlock per slot: the writer (one thread) zeroes the slot's
// number, writes the fields, stores the number with release, then the count with
// release. A reader copies the slots of the last kCycleEpochSlots epochs and keeps
// those whose number was the same before and after (a slot being reused is skipped).
#pragma once

#include <atomic>
#include <cstdint>

#include "agent/region/region_layout.h"
#include "timers/timer.h"

namespace pfs {

struct epoch_copy {
  std::uint64_t raw_start = 0;
  std::uint64_t ps_start = 0;
  std::uint64_t mult = 0;
  double frequency = 0;
};

// Copies the published epochs, oldest first, into out[kCycleEpochSlots]; returns
// how many. Garbage (a damaged file) cannot make it read outside the header: slots
// are indexed modulo their count, and epochs out of order are dropped.
inline std::uint32_t load_cycle_epochs(const layout::region_header& h, epoch_copy* out) {
  using layout::kCycleEpochSlots;
  const std::uint64_t count = layout::load_acquire(h.cycle_epoch_count);
  if (count == 0) return 0;
  const std::uint64_t kept = count < kCycleEpochSlots ? count : kCycleEpochSlots;
  std::uint32_t n = 0;
  for (std::uint64_t k = 0; k < kept; ++k) {
    const std::uint64_t number = count - kept + 1 + k;
    const layout::cycle_epoch& e = h.cycle_epochs[(number - 1) % kCycleEpochSlots];
    if (layout::load_acquire(e.number) != number) continue;
    epoch_copy c;
    c.raw_start = layout::load_relaxed(e.raw_start);
    c.ps_start = layout::load_relaxed(e.ps_start);
    c.mult = layout::load_relaxed(e.mult);
    __atomic_load(&e.frequency, &c.frequency, __ATOMIC_RELAXED);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (layout::load_relaxed(e.number) != number) continue;
    if (n > 0 && c.raw_start < out[n - 1].raw_start) continue;  // out of order: not ours
    out[n++] = c;
  }
  return n;
}

// CYCLE's rate in force: the latest epoch's, or the calibration at start-up.
inline double cycle_frequency_in_force(const layout::region_header& h) {
  epoch_copy epochs[layout::kCycleEpochSlots];
  if (const std::uint32_t n = load_cycle_epochs(h, epochs); n != 0) return epochs[n - 1].frequency;
  double f = 0;
  __atomic_load(&h.timers[static_cast<int>(timers::timer_kind::cycle)].frequency, &f, __ATOMIC_RELAXED);
  return f;
}

// ps_start + ((raw - raw_start) * mult) >> shift, saturated at UINT64_MAX.
inline std::uint64_t epoch_to_pico(const epoch_copy& e, std::uint32_t shift, std::uint64_t raw) {
  const timers::uint128 d = (static_cast<timers::uint128>(raw - e.raw_start) * e.mult) >> (shift & 127);
  const timers::uint128 ps = d + e.ps_start;
  return ps >> 64 != 0 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(ps);
}

// The epoch of raw among epochs[0..n) (oldest first): the last that starts at or
// before it; nullptr when raw precedes them all (then epoch 0, the header's
// converter, applies; with more than kCycleEpochSlots epochs, values older than the
// oldest kept one are converted with epoch 0 too).
inline const epoch_copy* epoch_of(const epoch_copy* epochs, std::uint32_t n, std::uint64_t raw) {
  for (std::uint32_t i = n; i > 0; --i)
    if (epochs[i - 1].raw_start <= raw) return &epochs[i - 1];
  return nullptr;
}

// Picoseconds of an absolute CYCLE value for the provider, which converts one value
// at a time (base: its converter of epoch 0). The newest epoch is tried first.
inline std::uint64_t cycle_to_pico(const layout::region_header& h, const timers::pico_converter& base,
                                   std::uint64_t raw) {
  if (layout::load_acquire(h.cycle_epoch_count) == 0) return base.to_pico(raw);
  epoch_copy epochs[layout::kCycleEpochSlots];
  const std::uint32_t n = load_cycle_epochs(h, epochs);
  const epoch_copy* e = epoch_of(epochs, n, raw);
  return e != nullptr ? epoch_to_pico(*e, base.shift, raw) : base.to_pico(raw);
}

// The provider's CYCLE watch only: publishes epoch count + 1 starting at raw_start
// with the given rate (at the header's CYCLE shift) and returns its multiplier; 0 if
// the rate cannot be converted at that shift (nothing is published).
inline std::uint64_t publish_cycle_epoch(layout::region_header& h, std::uint64_t raw_start,
                                         double frequency) {
  const auto& d = h.timers[static_cast<int>(timers::timer_kind::cycle)];
  const timers::pico_converter base{d.base, layout::load_relaxed(d.mult), d.shift};
  std::uint64_t mult = 0;
  if (base.mult == 0 || !timers::multiplier_at_shift(frequency, d.shift, &mult) || mult == 0) return 0;
  epoch_copy epochs[layout::kCycleEpochSlots];
  const std::uint32_t n = load_cycle_epochs(h, epochs);
  if (n > 0 && raw_start < epochs[n - 1].raw_start) raw_start = epochs[n - 1].raw_start;
  if (n == 0 && raw_start < base.base) raw_start = base.base;
  const epoch_copy* prev = epoch_of(epochs, n, raw_start);
  const std::uint64_t ps_start =
      prev != nullptr ? epoch_to_pico(*prev, d.shift, raw_start) : base.to_pico(raw_start);
  const std::uint64_t number = layout::load_relaxed(h.cycle_epoch_count) + 1;
  layout::cycle_epoch& e = h.cycle_epochs[(number - 1) % layout::kCycleEpochSlots];
  layout::store_relaxed(e.number, std::uint64_t{0});
  std::atomic_thread_fence(std::memory_order_release);
  layout::store_relaxed(e.raw_start, raw_start);
  layout::store_relaxed(e.ps_start, ps_start);
  layout::store_relaxed(e.mult, mult);
  __atomic_store(&e.frequency, &frequency, __ATOMIC_RELAXED);
  layout::store_release(e.number, number);
  layout::store_release(h.cycle_epoch_count, number);
  return mult;
}

}  // namespace pfs

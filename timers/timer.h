// The timers of performance_timers: read raw values cheaply, describe each timer
// (frequency, resolution, overhead, availability) and convert raw values to
// picoseconds with a fixed-point multiply and shift fixed at initialization.
//
// The hot path only calls read(); providers store raw values and readers convert.
#pragma once

#include <cstdint>
#include <ctime>
#include <string_view>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace pfs::timers {

// Numbering is part of the region layout (setup_timers stores it): never renumber.
enum class timer_kind : std::uint8_t {
  none = 0,
  cycle = 1,
  nanosecond = 2,
  microsecond = 3,
  millisecond = 4,
  tick = 5,
  thread_cpu = 6,
};
inline constexpr int timer_kind_count = 7;  // including none

// "CYCLE", "NANOSECOND", ...; "" for none.
std::string_view timer_name(timer_kind kind);
// Case-insensitive lookup; timer_kind::none if the name is not a timer.
timer_kind timer_from_name(std::string_view name);

inline std::uint64_t read_clock(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

inline std::uint64_t read_cycle() {
#if defined(__x86_64__)
  return __rdtsc();
#elif defined(__aarch64__)
  std::uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return 0;
#endif
}

std::uint64_t read_tick();  // times(): a system call, so out of line

// Reads a raw value of the given timer. The switch compiles to a jump table; callers
// on the hot path usually pass a value they loaded once per event.
inline std::uint64_t read(timer_kind kind) {
  switch (kind) {
    case timer_kind::cycle:
      return read_cycle();
    case timer_kind::nanosecond:
      return read_clock(CLOCK_MONOTONIC);
    case timer_kind::microsecond:
      return read_clock(CLOCK_MONOTONIC) / 1000u;
    case timer_kind::millisecond:
      return read_clock(CLOCK_MONOTONIC) / 1000000u;
    case timer_kind::tick:
      return read_tick();
    case timer_kind::thread_cpu:
      return read_clock(CLOCK_THREAD_CPUTIME_ID);
    case timer_kind::none:
      break;
  }
  return 0;
}

// 128-bit unsigned integer for the converter's product (__extension__ keeps -Wpedantic quiet).
__extension__ typedef unsigned __int128 uint128;

// picoseconds = ((raw - base) * mult) >> shift, with a 128-bit product: one multiply,
// no division, no floating point. Chosen so that mult fits in 63 bits and the relative
// error of mult is below 1e-9.
struct pico_converter {
  std::uint64_t base = 0;  // raw value at the baseline (initialization)
  std::uint64_t mult = 0;  // 0 means: timer unavailable, convert to 0
  std::uint32_t shift = 0;

  std::uint64_t to_pico(std::uint64_t raw) const {
    if (raw < base) return 0;
    return delta_to_pico(raw - base);
  }
  // Saturated at UINT64_MAX: a single interval of more than 2^64 ps (213 days)
  // never wraps to a small one.
  // mult is loaded atomically: the agent's CYCLE watch (cycle_watch.h) stores a new
  // one while other threads convert (a plain load on x86-64 and aarch64).
  std::uint64_t delta_to_pico(std::uint64_t delta) const {
    const uint128 ps = (static_cast<uint128>(delta) * __atomic_load_n(&mult, __ATOMIC_RELAXED)) >> shift;
    return ps >> 64 != 0 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(ps);
  }
};

// The multiplier of a converter with the given shift for a timer of the given
// frequency: round(1e12 / f * 2^shift); false when it does not fit in 63 bits. A
// recalibrated CYCLE timer keeps its first shift, so that a new rate only changes
// the multiplier (one atomic store for the provider).
bool multiplier_at_shift(double frequency_hz, std::uint32_t shift, std::uint64_t* mult);

// Builds the converter for a timer of the given frequency (units per second, may be
// fractional for a calibrated CYCLE timer).
pico_converter make_converter(double frequency_hz, std::uint64_t base);

struct timer_info {
  timer_kind kind = timer_kind::none;
  bool available = false;
  double frequency = 0;                 // units per second (calibrated for CYCLE)
  std::uint64_t resolution = 0;         // smallest observed step, in timer units
  std::uint64_t overhead = 0;           // minimum cost of one read, in CPU cycles, over >= 20 calls
  const char* unavailable_reason = "";  // why available is false, for users
  // CYCLE on a machine whose kernel keeps time with another clock source (a VM's
  // kvm-clock): the TSC is invariant, but nobody checks its rate unless the agent does.
  bool needs_rate_checks = false;
};

// Measures one timer now (frequency, resolution, overhead). CYCLE calibration takes
// about 20 ms; the others are quick. Thread-safe.
timer_info measure(timer_kind kind);

// The process-wide description of every timer, measured once on first use.
const timer_info& info(timer_kind kind);

// CYCLE when it is trustworthy here, otherwise NANOSECOND.
timer_kind default_wait_timer();

}  // namespace pfs::timers

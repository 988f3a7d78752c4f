// The pieces of the timers library behind measure(): the CYCLE availability decision,
// the CYCLE calibration, and the resolution and overhead measurements. Exposed so that
// tests and benchmarks can exercise each one on its own; applications use timer.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "timers/timer.h"

namespace pfs::timers::detail {

// Name of the environment variable that, when set to a non-empty value other than
// "0", makes CYCLE unavailable (so the fallback path can be exercised anywhere).
inline constexpr const char* kDisableCycleEnv = "PFS_TIMER_DISABLE_CYCLE";
inline constexpr const char* kClocksourcePath =
    "/sys/devices/system/clocksource/clocksource0/current_clocksource";

struct cycle_decision {
  bool available = false;
  // The kernel keeps its own time with the TSC (clock source tsc), so it watches the
  // TSC's rate for us. Otherwise (kvm-clock, xen, hyperv: a guest whose TSC may change
  // rate when it migrates) the agent checks the rate itself (cycle_watch.h).
  bool kernel_vouches = false;
  std::string reason;  // empty when available
};

// The x86-64 CYCLE trust rule as a pure function. Inputs: whether CPUID reports an
// invariant TSC (0x80000007 EDX bit 8), the content of current_clocksource (trailing
// whitespace ignored; "" if it could not be read) and the value of
// PFS_TIMER_DISABLE_CYCLE (nullptr if unset). The environment override wins, then
// invariance; the clock source only says whether the kernel vouches for the rate.
cycle_decision decide_cycle_availability(bool tsc_invariant, std::string_view clocksource,
                                         const char* disable_env);

// CPUID 0x80000007 EDX bit 8; false on other architectures.
bool tsc_invariant();
// The kernel's current clock source name (whitespace trimmed), "" if unreadable.
std::string current_clocksource();

// One (CLOCK_MONOTONIC_RAW, counter) pair: ns is the midpoint of the raw reads that
// bracket the counter read, gap_ns their distance (the uncertainty of the pair).
struct clock_pair {
  std::uint64_t ns = 0;
  std::uint64_t counter = 0;
  std::uint64_t gap_ns = 0;
};
// The tightest (smallest gap) of `tries` (raw_ns, read_cycle(), raw_ns) triplets.
clock_pair tightest_cycle_pair(int tries = 16);
// A pair whose gap is at most 2 us if one can be had in a few rounds of
// tightest_cycle_pair (a preempted or interrupted triplet has a large gap and loses),
// otherwise the best seen.
clock_pair good_cycle_pair();

struct cycle_calibration {
  double frequency = 0;        // counter units per second; 0 if the calibration failed
  double uncertainty_ppm = 0;  // (gap at start + gap at end) / elapsed, in ppm
  std::uint64_t elapsed_ns = 0;
};
// How calibrate_cycle() waits between its two ends: measure() sleeps; a benchmark that
// must burn CPU time for its iteration count to settle spins on CLOCK_MONOTONIC_RAW.
enum class calibration_wait : std::uint8_t { sleep, spin };

// Calibrates read_cycle() against CLOCK_MONOTONIC_RAW with min-latency bracketing at
// both ends of a wait of `window`. Floating point here is fine: setup only.
cycle_calibration calibrate_cycle(std::chrono::nanoseconds window = std::chrono::milliseconds(20),
                                  calibration_wait wait = calibration_wait::sleep);

// Smallest step by which the timer's value moves, from the steps seen between
// consecutive reads (up to 2048 of them): the greatest common divisor of the step sizes
// that make up at least 1% of the steps (rare odd steps from interrupts or migrations
// are ignored), or of all steps when there are fewer than 200. For a coarse timer that is
// exactly its smallest observed step (1 unit for MILLISECOND and TICK). For a timer
// that moves faster than it can be read (CYCLE, NANOSECOND) the smallest step is the
// read latency, not the granularity; the gcd finds the granularity (1, or e.g. 26 for
// a TSC that the CPU advances in 10 ns strides, as on AMD Zen). Waits at most
// `max_wait` for steps (a coarse timer needs three: about 30 ms for a 100 Hz TICK);
// returns 1 if it saw none.
std::uint64_t measure_resolution(timer_kind kind,
                                 std::chrono::nanoseconds max_wait = std::chrono::milliseconds(50));

// Minimum cost of one read of the timer in CPU cycles: the cheapest of 16 blocks of
// `calls` (>= 20) consecutive reads, each block timed with rdtsc deltas on x86-64 (with
// measure_overhead_portable() elsewhere), less the cost of an empty bracket, divided by
// the number of calls; at least 1.
std::uint64_t measure_overhead(timer_kind kind, int calls = 32);

// The portable variant: CLOCK_MONOTONIC brackets in ns times estimate_cpu_hz().
// Compiled on every architecture (so it is tested on x86-64 too).
std::uint64_t measure_overhead_portable(timer_kind kind, int calls = 32);

// Rough CPU clock estimate from a chain of dependent integer additions (one cycle
// each on every current core), timed with CLOCK_MONOTONIC. Cached after the first call.
double estimate_cpu_hz();

// Makes a string live for the rest of the process and returns a stable pointer to it
// (timer_info::unavailable_reason is a const char*). Thread-safe; equal strings share
// one copy, so repeated measure() calls do not grow memory.
const char* intern(std::string_view text);

}  // namespace pfs::timers::detail

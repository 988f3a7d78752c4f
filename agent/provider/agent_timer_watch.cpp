// The CYCLE watch: a small thread that checks the TSC's rate against
// CLOCK_MONOTONIC_RAW every few seconds where the kernel does not vouch for it (a
// VM's kvm-clock), and when it changed publishes a calibration epoch in the region
// (cycle_epochs.h) and gives the event path the new multiplier (one atomic store).
//
// A thread rather than a slow path: a program may make no slow call for hours while
// its waits go on, and the check must not wait for one. The thread makes two
// clock_gettime pairs and a sleep per check, touches only the region's header and
// the converter's multiplier, takes no lock and no signal (all blocked), and is never
// joined: the region stays mapped after shutdown, and the thread stops at the first
// check after recording stopped. It is not one of the program's threads: it is
// created with the real pthread_create (under the interposer) and never registered.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cmath>

#include "agent/provider/internal/agent_internal.h"
#include "timers/cycle_watch.h"

namespace pfs::detail {

thread_create_fn g_thread_create = nullptr;
void set_thread_create_hook(thread_create_fn create) { g_thread_create = create; }

namespace {

constexpr int kCycle = static_cast<int>(timers::timer_kind::cycle);

// The program runs under a sanitizer runtime (restart_cycle_watch_in_child).
bool g_sanitizer_runtime = false;

void sleep_ms(unsigned ms) {
  timespec left{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &left, &left) == EINTR) {
  }
}

// Set by the watch thread once it has started (spawn_watch waits for it).
int g_watch_started = 0;

void* watch_main(void* arg) {
  auto& h = *static_cast<region_header*>(arg);
  pthread_setname_np(pthread_self(), "pfs_cycle_watch");
  const unsigned interval = load_relaxed(h.cycle_watch_interval_ms);
  timers::cycle_rate_watch watch(cycle_frequency_in_force(h), timers::detail::good_cycle_pair());
  store_release(g_watch_started, 1);
  for (;;) {
    sleep_ms(interval);
    if (!load_relaxed(g_hot.recording)) return nullptr;
    const timers::cycle_rate_watch::outcome o = watch.observe(timers::detail::good_cycle_pair());
    if (!o.checked) continue;
    store_relaxed(h.cycle_checks, load_relaxed(h.cycle_checks) + 1);
    const double ppb = std::fabs(o.drift_ppm) * 1000.0;
    const auto drift = static_cast<std::uint64_t>(std::llround(std::fmin(ppb, 9.0e18)));
    if (drift > load_relaxed(h.cycle_max_drift_ppb)) store_relaxed(h.cycle_max_drift_ppb, drift);
    if (!o.recalibrate) continue;
    const std::uint64_t mult = publish_cycle_epoch(h, o.from_counter, o.measured_hz);
    // Durations measured from now on use the new rate (the summaries' picoseconds).
    if (mult != 0) __atomic_store_n(&g_hot.converters[kCycle].mult, mult, __ATOMIC_RELAXED);
  }
}

bool spawn_watch(region_header& h, bool wait_started) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  // The new thread inherits this mask: no signal of the program lands on it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t t;
  const thread_create_fn create = g_thread_create != nullptr ? g_thread_create : &pthread_create;
  store_relaxed(g_watch_started, 0);
  const bool ok = create(&t, &attr, watch_main, &h) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_attr_destroy(&attr);
  // Return once the thread runs its loop (a few tens of microseconds, at most 1 s):
  // a thread still starting up may hold its runtime's locks (AddressSanitizer's
  // allocator takes them for a new thread's state), and a program that forks right
  // after init would leave them held in the child.
  for (int i = 0; ok && wait_started && i < 10000 && load_acquire(g_watch_started) == 0; ++i) {
    const timespec pause{0, 100000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &pause, nullptr);
  }
  return ok;
}

}  // namespace

void start_cycle_watch(region_header& h, unsigned interval_ms) {
  if (h.timers[kCycle].available == 0) return;
  // Looked up now: dlsym is no call for a fork child handler.
  g_sanitizer_runtime =
      dlsym(RTLD_DEFAULT, "__asan_init") != nullptr || dlsym(RTLD_DEFAULT, "__tsan_init") != nullptr ||
      dlsym(RTLD_DEFAULT, "__msan_init") != nullptr || dlsym(RTLD_DEFAULT, "__hwasan_init") != nullptr;
  store_relaxed(h.cycle_watch_interval_ms, interval_ms);
  store_relaxed(h.cycle_watch, spawn_watch(h, true) ? 1u : 0u);
}

void restart_cycle_watch_in_child(region_header& h) {
  if (load_relaxed(h.cycle_watch) == 0) return;
  // A sanitizer's fork interceptor holds its thread registry locked until fork
  // returns, so a thread created in a child handler would wait for it forever
  // (ThreadSanitizer also refuses threads after a multi-threaded fork): there the
  // child keeps the parent's calibration, and cycle_watch shows 0.
  if (g_sanitizer_runtime) {
    store_relaxed(h.cycle_watch, 0u);
    return;
  }
  // Not waiting for it: only a sanitizer's runtime (not here) holds locks while a
  // thread starts (glibc's fork takes its own), and the wait, sleeps of 100 us,
  // was the largest part of a child's fork (bench/fork_cost.sh).
  store_relaxed(h.cycle_watch, spawn_watch(h, false) ? 1u : 0u);
}

}  // namespace pfs::detail

// The meter thread: one per process, started by the first observed metric, calls
// the observed metrics' callbacks off the program's threads. Every tick it looks at
// each meter: while ENABLED, when FREQUENCY seconds have passed since its last
// round (as setup_meters says now, so an UPDATE takes effect at the next tick), it
// calls the callbacks of the meter's observed metrics, which store their values.
// The first round of a meter is at the first tick after its first observer.
//
// It holds no lock of the agent or the program while it calls a callback (the
// records and callbacks are read with atomic loads), takes no signal (all blocked),
// is created with the real pthread_create (under the interposer) and is never
// registered as one of the program's threads. It stops at the first tick after
// recording stopped.
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <cerrno>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/meter_internal.h"

namespace pfs::detail {
namespace {

constexpr long kTickNs = 100 * 1000 * 1000;  // 0.1 s: FREQUENCY is whole seconds

std::atomic<bool> g_watch_running{false};
std::atomic<pfs_metric> g_calling{0};  // the metric whose callback runs now
std::atomic<pthread_t> g_watch_thread{};

std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

void observe_meter(meter_state& st, std::uint32_t meter) {
  const std::uint32_t declared = __atomic_load_n(&st.metrics_declared, __ATOMIC_ACQUIRE);
  for (std::uint32_t i = 0; i < declared; ++i) {
    if (load_relaxed(st.metrics[i].meter_index) != meter) continue;
    observer& o = st.observers[i];
    if (__atomic_load_n(&o.fn, __ATOMIC_ACQUIRE) == nullptr) continue;
    const layout::metric_record& r = st.metrics[i];
    const pfs_metric m = metric_handle(i, load_relaxed(r.type), load_relaxed(r.num_type));
    g_calling.store(m, std::memory_order_seq_cst);
    // Read again after announcing the call: an unregister that cleared it before
    // waits for g_calling; one after it sees the call and waits.
    const pfs_observe_fn fn = __atomic_load_n(&o.fn, __ATOMIC_SEQ_CST);
    if (fn != nullptr) fn(m, __atomic_load_n(&o.arg, __ATOMIC_RELAXED));
    g_calling.store(0, std::memory_order_release);
  }
}

void tick(meter_state& st) {
  const std::uint64_t now = monotonic_ns();
  const std::uint32_t meters = __atomic_load_n(&st.meters_declared, __ATOMIC_ACQUIRE);
  for (std::uint32_t j = 0; j < meters; ++j) {
    const layout::meter_record& r = st.meters[j];
    if (load_relaxed(r.enabled) == 0) continue;
    const std::uint64_t frequency = load_relaxed(r.frequency);
    std::uint64_t& last = st.last_call_ns[j];
    if (last != 0 && now - last < frequency * 1000000000u) continue;
    last = now;
    observe_meter(st, j + 1);
  }
}

void* watch_main(void*) {
  pthread_setname_np(pthread_self(), "pfs_meters");
  for (;;) {
    const timespec pause{0, kTickNs};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &pause, nullptr);
    if (!load_relaxed(g_hot.recording)) break;
    meter_state* st = g_meter_state.load(std::memory_order_acquire);
    if (st != nullptr) tick(*st);
  }
  g_watch_running.store(false, std::memory_order_release);
  return nullptr;
}

}  // namespace

void start_meter_watch() {
  bool expected = false;
  if (!g_watch_running.compare_exchange_strong(expected, true)) return;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) {
    g_watch_running.store(false);
    return;
  }
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);  // the program's callbacks run on it
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // inherited: no signal of the program lands on it
  pthread_t t;
  const thread_create_fn create = g_thread_create != nullptr ? g_thread_create : &pthread_create;
  const bool ok = create(&t, &attr, watch_main, nullptr) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_attr_destroy(&attr);
  if (ok)
    g_watch_thread.store(t);
  else
    g_watch_running.store(false);
}

void wait_for_observer(pfs_metric metric) {
  if (g_watch_running.load() && pthread_equal(g_watch_thread.load(), pthread_self()))
    return;  // from a callback
  const std::uint32_t index = metric & kMetricIndexMask;
  while ((g_calling.load(std::memory_order_seq_cst) & kMetricIndexMask) == index) {
    const timespec pause{0, 1000000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &pause, nullptr);
  }
}

}  // namespace pfs::detail

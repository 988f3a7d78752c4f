// Uncontended lock+unlock: std::mutex against pfs::mutex with the instrument
// disabled, counted (summaries only; and with events_waits_current), timed
// (current + summaries) and timed with history (current, history, history_long);
// the contended path's own cost (contended_path against contended_path_base),
// two threads queueing on one mutex (shared), and two threads locking random mutexes
// out of 64 shared ones, the sysbench pattern (contended against contended_raw).
// The agent is started once for the whole binary (a region in /tmp, removed at exit).
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <string>

#include "agent/provider/pfs.h"
#include "agent/region/setup.h"
#include "bench_agent.h"

namespace {

// threads.HISTORY of the calling thread: the "timed" case keeps current + summaries only.
void set_my_history(bool on) {
  const pfs::region_map& r = *pfs::current_region();
  pfs::setup_lock_guard lock(r);
  pfs::setup::set_thread(r, pfs::thread_id(), -1, on ? 1 : 0);
}

void BM_MutexRaw(benchmark::State& state) {
  pfs::bench::start_agent();  // same process state as the instrumented cases
  std::mutex local;
  for (auto _ : state) {
    local.lock();
    local.unlock();
  }
}

// current: the events_waits_current consumer (off = summaries only).
void run_instrumented(benchmark::State& state, const char* name, bool history, bool current = true) {
  pfs::bench::start_agent();
  pfs::mutex m{"bench", name};
  { pfs::lock_guard warm(m); }  // registers the thread
  set_my_history(history);
  if (!current && state.thread_index() == 0) pfs::set_consumer("events_waits_current", false);
  for (auto _ : state) {
    m.lock();
    m.unlock();
  }
  if (!current && state.thread_index() == 0) pfs::set_consumer("events_waits_current", true);
  state.counters["events_per_iter"] = 1;
}

void BM_MutexDisabled(benchmark::State& state) { run_instrumented(state, "disabled", false); }
// COUNTED instrument, summaries only: what "count the waits" costs.
void BM_MutexCounted(benchmark::State& state) { run_instrumented(state, "counted", false, false); }
// COUNTED instrument with events_waits_current on: each wait also written as a row.
void BM_MutexCountedCurrent(benchmark::State& state) { run_instrumented(state, "counted", false); }
void BM_MutexTimed(benchmark::State& state) { run_instrumented(state, "timed", false); }
void BM_MutexTimedHistory(benchmark::State& state) { run_instrumented(state, "timed_history", true); }

// Timed, history, and traced: each wait also written as two INSERT lines to the
// thread's trace file (trace worklog), buffered.
void BM_MutexTraced(benchmark::State& state) {
  pfs::bench::start_agent();
  pfs::mutex m{"bench", "traced"};
  pfs::set_instrument_trace("wait/synch/mutex/bench/traced", true);
  pfs::set_actor_trace("%", "%", "%", true);
  { pfs::lock_guard warm(m); }
  set_my_history(true);
  for (auto _ : state) {
    m.lock();
    m.unlock();
  }
  pfs::set_actor_trace("%", "%", "%", false);
  state.counters["events_per_iter"] = 1;
}

// The contended path's own cost, with no second thread: what a lock pays besides
// its wait when its try-lock failed. The instance keeps an owner (this thread's
// previous acquisition; the real lock is never taken), so every iteration names
// a holder and adds to lock_contention_by_instance as a queued wait does.
// contended_path: the path as it is (start_contended, end_mutex_wait);
// contended_path_base: the same without who-blocks-whom (start_running,
// set_owner, end_wait), the path before it existed. Their difference is the
// price of BLOCKING_* and lock_contention_by_instance.
// timed = false: a COUNTED instrument, without the two timer reads whose cost
// (and noise) on a kvm-clock guest is larger than the difference measured.
void run_contended_path(benchmark::State& state, const char* name, bool blocking, bool timed = true) {
  pfs::bench::start_agent();
  pfs::mutex m{"bench", name};
  if (!timed) pfs::set_instrument(("wait/synch/mutex/bench/" + std::string(name)).c_str(), true, false);
  { pfs::lock_guard warm(m); }
  set_my_history(true);
  auto* s = pfs::detail::as_instance(m.psi());
  for (auto _ : state) {
    pfs::detail::wait_locker l;
    if (!pfs::detail::begin_wait(l, s, PFS_OP_LOCK)) continue;
    if (blocking) {
      pfs::detail::start_contended(l, __FILE__, __LINE__);
      pfs::detail::end_mutex_wait(l, 0);
    } else {
      pfs::detail::start_running(l, __FILE__, __LINE__);
      pfs::detail::set_owner(l, *s);
      l.thread->lock_time += pfs::detail::end_wait(l, false);
    }
    benchmark::ClobberMemory();
  }
  pfs::detail::unlock_mutex(s);
  state.counters["events_per_iter"] = 1;
}
void BM_MutexContendedPath(benchmark::State& state) { run_contended_path(state, "contended", true); }
void BM_MutexContendedPathBase(benchmark::State& state) {
  run_contended_path(state, "contended_base", false);
}
void BM_MutexContendedPathCounted(benchmark::State& state) {
  run_contended_path(state, "contended_counted", true, false);
}
void BM_MutexContendedPathCountedBase(benchmark::State& state) {
  run_contended_path(state, "contended_counted_base", false, false);
}

// Two threads on one mutex: real queueing (wall time per lock+unlock per thread).
void BM_MutexShared(benchmark::State& state) {
  pfs::bench::start_agent();
  static pfs::mutex* shared = new pfs::mutex{"bench", "shared"};
  { pfs::lock_guard warm(*shared); }
  set_my_history(true);
  std::uint64_t x = 1;
  for (auto _ : state) {
    shared->lock();
    for (int i = 0; i < 16; ++i) x = x * 6364136223846793005u + 1;  // a short critical section
    shared->unlock();
  }
  benchmark::DoNotOptimize(x);
  state.counters["events_per_iter"] = 1;
}

// The sysbench mutex pattern: two threads each lock a random one of 64 shared
// mutexes, with a little work inside and between (wall time per lock+unlock per
// thread). contended_raw: std::mutex; contended: pfs::mutex, timed, with history.
// The instrumentation's cost under contention is contended - contended_raw, to
// compare with the uncontended timed_history - raw.
constexpr int kContendedMutexes = 64;

template <class Mutex>
void run_random_locks(benchmark::State& state, Mutex* mutexes) {
  std::uint64_t rng = 0x9E3779B97F4A7C15u * static_cast<std::uint64_t>(state.thread_index() + 1);
  std::uint64_t x = 1;
  for (auto _ : state) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    Mutex& m = mutexes[rng % kContendedMutexes];
    m.lock();
    for (int i = 0; i < 8; ++i) x = x * 6364136223846793005u + 1;  // inside
    m.unlock();
    for (int i = 0; i < 8; ++i) x = x * 6364136223846793005u + 1;  // between
  }
  benchmark::DoNotOptimize(x);
  state.counters["events_per_iter"] = 1;
}

void BM_MutexContendedRaw(benchmark::State& state) {
  pfs::bench::start_agent();
  static std::mutex* mutexes = new std::mutex[kContendedMutexes];
  run_random_locks(state, mutexes);
}

void BM_MutexContended(benchmark::State& state) {
  pfs::bench::start_agent();
  static pfs::mutex* mutexes = [] {
    auto* m = static_cast<pfs::mutex*>(::operator new(sizeof(pfs::mutex) * kContendedMutexes));
    for (int i = 0; i < kContendedMutexes; ++i) new (&m[i]) pfs::mutex{"bench", "contended_random"};
    return m;
  }();
  { pfs::lock_guard warm(mutexes[0]); }  // registers the thread
  set_my_history(true);
  run_random_locks(state, mutexes);
}

// The machine, not the agent: two threads take turns writing one cache line, so
// each turn moves the line from the other thread's core (wall time per turn, as
// printed: a one-way transfer). On a virtual machine it follows where the host runs
// the two vCPUs (sharing a cache or not) and it moves between runs; the two-thread
// cases above are to be read next to it.
void BM_LineTransfer(benchmark::State& state) {
  alignas(64) static std::atomic<std::uint64_t> turn{0};
  const auto me = static_cast<std::uint64_t>(state.thread_index());
  for (auto _ : state) {
    while (turn.load(std::memory_order_acquire) % 2 != me) {
    }
    turn.fetch_add(1, std::memory_order_release);
  }
}

const bool registered = [] {
  benchmark::RegisterBenchmark("BM_Mutex/raw", BM_MutexRaw);
  benchmark::RegisterBenchmark("BM_Mutex/disabled", BM_MutexDisabled);
  benchmark::RegisterBenchmark("BM_Mutex/counted", BM_MutexCounted);
  benchmark::RegisterBenchmark("BM_Mutex/counted_current", BM_MutexCountedCurrent);
  benchmark::RegisterBenchmark("BM_Mutex/timed", BM_MutexTimed);
  benchmark::RegisterBenchmark("BM_Mutex/timed_history", BM_MutexTimedHistory);
  // Fixed iterations: each writes about 460 bytes of trace.
  benchmark::RegisterBenchmark("BM_Mutex/traced", BM_MutexTraced)->Iterations(200000);
  benchmark::RegisterBenchmark("BM_Mutex/raw", BM_MutexRaw)->Threads(2);
  benchmark::RegisterBenchmark("BM_Mutex/counted", BM_MutexCounted)->Threads(2);
  benchmark::RegisterBenchmark("BM_Mutex/timed", BM_MutexTimed)->Threads(2);
  benchmark::RegisterBenchmark("BM_Mutex/timed_history", BM_MutexTimedHistory)->Threads(2);
  benchmark::RegisterBenchmark("BM_Mutex/line_transfer", BM_LineTransfer)->Threads(2)->UseRealTime();
  benchmark::RegisterBenchmark("BM_Mutex/contended_path_base", BM_MutexContendedPathBase);
  benchmark::RegisterBenchmark("BM_Mutex/contended_path", BM_MutexContendedPath);
  benchmark::RegisterBenchmark("BM_Mutex/contended_path_counted_base", BM_MutexContendedPathCountedBase);
  benchmark::RegisterBenchmark("BM_Mutex/contended_path_counted", BM_MutexContendedPathCounted);
  benchmark::RegisterBenchmark("BM_Mutex/shared", BM_MutexShared)->Threads(2)->UseRealTime();
  benchmark::RegisterBenchmark("BM_Mutex/contended_raw", BM_MutexContendedRaw)->Threads(2)->UseRealTime();
  benchmark::RegisterBenchmark("BM_Mutex/contended", BM_MutexContended)->Threads(2)->UseRealTime();
  return true;
}();

}  // namespace

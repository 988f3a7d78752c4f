// Uncontended lock+unlock: std::mutex against pfs::mutex with the instrument
// disabled, counted (summaries only; and with events_waits_current), timed
// (current + summaries) and timed with history (current, history, history_long).
// The agent is started once for the whole binary (a region in /tmp, removed at exit).
#include <benchmark/benchmark.h>
#include <mutex>
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
  benchmark::RegisterBenchmark("BM_Mutex/timed_history", BM_MutexTimedHistory)->Threads(2);
  return true;
}();

}  // namespace

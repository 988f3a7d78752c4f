// Units of work: the cost of one statement or one stage event (start + end),
// disabled and timed with history, against two reads of the statement timer
// (BM_WorkTimerPair: what any timed event pays at least). The target: a
// timed statement or stage costs at most two timer reads + 25 ns; a disabled one
// at most 1 ns.
#include <benchmark/benchmark.h>

#include "agent/provider/pfs.h"
#include "bench_agent.h"
#include "timers/timer.h"

namespace {

void BM_WorkTimerPair(benchmark::State& state) {
  pfs::bench::start_agent();
  const auto kind = static_cast<pfs::timers::timer_kind>(pfs::current_region()->header().statement_timer);
  for (auto _ : state) {
    benchmark::DoNotOptimize(pfs::timers::read(kind));
    benchmark::DoNotOptimize(pfs::timers::read(kind));
  }
}

void run_statement(benchmark::State& state, const char* name) {
  pfs::bench::start_agent();
  pfs::statement_class c{"bench", name};
  { pfs::statement warm(c); }  // registers the thread
  for (auto _ : state) {
    pfs::statement s(c);
    benchmark::DoNotOptimize(s.recorded());
  }
  state.counters["events_per_iter"] = 1;
}

void BM_StatementDisabled(benchmark::State& state) { run_statement(state, "disabled"); }
void BM_StatementTimed(benchmark::State& state) { run_statement(state, "timed"); }

// Current and summaries only: what the history copies cost, by difference.
void BM_StatementTimedCurrent(benchmark::State& state) {
  pfs::set_consumer("events_statements_history", false);
  pfs::set_consumer("events_statements_history_long", false);
  run_statement(state, "timed_current");
  pfs::set_consumer("events_statements_history", true);
  pfs::set_consumer("events_statements_history_long", true);
}

// A statement with a 60-byte text: SQL_TEXT copied, DIGEST computed and the
// digest row updated (what a program pays for statement_analysis).
void BM_StatementWithText(benchmark::State& state) {
  pfs::bench::start_agent();
  pfs::statement_class c{"bench", "text"};
  { pfs::statement warm(c); }
  for (auto _ : state) {
    pfs::statement s(c, "shop");
    s.text("SELECT id, total FROM orders WHERE customer_id = 42 LIMIT 10");
  }
  state.counters["events_per_iter"] = 1;
}

void run_stage(benchmark::State& state, const char* name) {
  pfs::bench::start_agent();
  pfs::statement_class q{"bench", "stage_parent"};
  pfs::stage_class c{"bench", name};
  pfs::statement parent(q);  // stages nest in it
  for (auto _ : state) {
    pfs::stage s(c);
    benchmark::DoNotOptimize(&s);
  }
  state.counters["events_per_iter"] = 1;
}

void BM_StageDisabled(benchmark::State& state) { run_stage(state, "disabled"); }
void BM_StageTimed(benchmark::State& state) { run_stage(state, "timed"); }

const bool registered = [] {
  benchmark::RegisterBenchmark("BM_Work/timer_pair", BM_WorkTimerPair);
  benchmark::RegisterBenchmark("BM_Statement/disabled", BM_StatementDisabled);
  benchmark::RegisterBenchmark("BM_Statement/timed_current", BM_StatementTimedCurrent);
  benchmark::RegisterBenchmark("BM_Statement/timed_history", BM_StatementTimed);
  benchmark::RegisterBenchmark("BM_Statement/with_text", BM_StatementWithText);
  benchmark::RegisterBenchmark("BM_Stage/disabled", BM_StageDisabled);
  benchmark::RegisterBenchmark("BM_Stage/timed_history", BM_StageTimed);
  return true;
}();

}  // namespace

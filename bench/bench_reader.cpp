// Benchmarks of the reader: a scan of events_waits_history_long (the benchmark
// agent's region, 10000 rows) and the cost of the SIGBUS guard every scan and
// every FDW core call runs under (two sigaction calls and a mutex), to compare
// side by side (docs/design.md, "A region file that changes under a mapping").
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/reader/reader.h"
#include "agent/region/fault_guard.h"
#include "bench_agent.h"

namespace {

using namespace pfs;

void BM_FaultGuardScope(benchmark::State& state) {
  for (auto _ : state) {
    fault_guard::scope guard;
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_FaultGuardScope);

// A row sink that only counts: the scan itself, without building rows.
struct counting_sink final : reader::row_sink {
 public:
  std::size_t rows = 0;
  bool row(const reader::cell_view*, std::size_t) override {
    ++rows;
    return true;
  }
};

void BM_ReaderScanHistoryLong(benchmark::State& state) {
  bench::start_agent();
  {
    pfs::mutex m{"bench", "scan_fill"};
    for (int i = 0; i < 20000; ++i) pfs::lock_guard g(m);
  }
  region_error err;
  auto r = reader::region_reader::open(current_region()->path(), false, err);
  if (r == nullptr) {
    state.SkipWithError(err.message.c_str());
    return;
  }
  const auto& table = reader::table(reader::table_id::events_waits_history_long);
  std::size_t rows = 0;
  for (auto _ : state) {
    counting_sink sink;
    if (r->scan(table, sink)) state.SkipWithError("scan failed");
    rows = sink.rows;
  }
  state.counters["rows"] = static_cast<double>(rows);
}
BENCHMARK(BM_ReaderScanHistoryLong)->Unit(benchmark::kMicrosecond);

// What a small monitoring query asks of the reader (issue 37): its table and every
// column found by name, as the FDW does at each scan's start, then a scan of
// events_waits_current (a few rows; the class table loaded for their names).
void BM_ReaderSmallScan(benchmark::State& state) {
  bench::start_agent();
  region_error err;
  auto r = reader::region_reader::open(current_region()->path(), false, err);
  if (r == nullptr) {
    state.SkipWithError(err.message.c_str());
    return;
  }
  std::vector<std::string> names;
  for (const auto& c : reader::table(reader::table_id::events_waits_current).columns)
    names.emplace_back(c.name);
  std::size_t rows = 0;
  for (auto _ : state) {
    const reader::table_def* t = reader::find_table("events_waits_current");
    int found = 0;
    for (const std::string& n : names) found += reader::column_index(*t, n) >= 0 ? 1 : 0;
    benchmark::DoNotOptimize(found);
    counting_sink sink;
    if (r->scan(*t, sink)) state.SkipWithError("scan failed");
    rows = sink.rows;
  }
  state.counters["rows"] = static_cast<double>(rows);
}
BENCHMARK(BM_ReaderSmallScan);

// The top-10 query's reader part (issue 37): a scan of
// events_waits_summary_global_by_event_name without its quantile columns, in a
// program with a few wait classes among many classes of other kinds.
void BM_ReaderSmallSummary(benchmark::State& state) {
  bench::start_agent();
  for (int i = 0; i < 60; ++i) pfs_register_stage("bench", ("stage " + std::to_string(i)).c_str());
  {
    pfs::mutex m{"bench", "summary_fill"};  // this thread's slot, as a program's threads have
    m.lock();
    m.unlock();
  }
  region_error err;
  auto r = reader::region_reader::open(current_region()->path(), false, err);
  if (r == nullptr) {
    state.SkipWithError(err.message.c_str());
    return;
  }
  const reader::table_def& t = reader::table(reader::table_id::events_waits_summary_global_by_event_name);
  std::unique_ptr<bool[]> wanted(new bool[t.columns.size()]);
  for (std::size_t k = 0; k < t.columns.size(); ++k) wanted[k] = k < 6 || k >= 9;  // no quantile_*
  std::size_t rows = 0;
  for (auto _ : state) {
    counting_sink sink;
    sink.wanted = wanted.get();
    if (r->scan(t, sink)) state.SkipWithError("scan failed");
    rows = sink.rows;
  }
  state.counters["rows"] = static_cast<double>(rows);
}
BENCHMARK(BM_ReaderSmallSummary);

}  // namespace

// Benchmarks of the FDW's C++ core without PostgreSQL: a scan of
// events_waits_history_long (1,000,000 rows of pfs_fixture's region, the region
// bench/fdw_vs_heap.sh reads) through pfs_core_scan_next, piece by piece, each row
// then turned into Datum-like values the way the shim's pfs_row_values does (a value
// and a null flag per attribute). The queries are bench/fdw_vs_heap.sh's: what the
// core costs of them, on a quieter measure than the SQL benchmark's (these machines
// are noisy; compare figures of one run).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agent/reader/reader.h"
#include "fdw/pfs_core.h"

namespace {

// The shim's PFS_PIECE_BYTES; PFS_BENCH_PIECE_BYTES to try another size.
std::size_t piece_bytes() {
  const char* v = std::getenv("PFS_BENCH_PIECE_BYTES");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : 1024 * 1024;
}
constexpr std::size_t kVarHeader = 4;             // VARHDRSZ

// The fixture region, written on first use and removed at exit.
std::string g_region_path;
struct region_cleanup {
  ~region_cleanup() {
    if (g_region_path.empty()) return;
    unlink(g_region_path.c_str());
    rmdir(g_region_path.substr(0, g_region_path.rfind('/')).c_str());
  }
} g_cleanup;  // after g_region_path: destroyed before it

const std::string& region_path() {
  if (g_region_path.empty()) {
    char dir[] = "/tmp/pfs_bench_core.XXXXXX";
    if (mkdtemp(dir) == nullptr) return g_region_path;
    const std::string p = std::string(dir) + "/history.region";
    const std::string cmd =
        std::string(PFS_BUILD_DIR) + "/tools/pfs_fixture --history-long-rows=1000000 '" + p + "' >/dev/null";
    if (std::system(cmd.c_str()) == 0) g_region_path = p;
  }
  return g_region_path;
}

int history_long() { return pfs_core_table_find("events_waits_history_long"); }

// One query: the columns it returns and its conditions, as the shim passes them.
struct query {
  std::vector<const char*> columns;
  int thread_id = 0;             // thread_id = ... (0: no condition)
  const char* prefix = nullptr;  // event_name LIKE 'prefix%'
};

void run_scan(benchmark::State& state, const query& q) {
  if (!pfs_core_init()) {
    state.SkipWithError("pfs_core_init failed");
    return;
  }
  const std::string& path = region_path();
  if (path.empty()) {
    state.SkipWithError("pfs_fixture failed");
    return;
  }
  PfsCoreError err{};
  PfsCoreRegion* region = pfs_core_region_get(1, path.c_str(), &err);
  if (region == nullptr) {
    state.SkipWithError(err.message);
    return;
  }
  const int t = history_long();
  const int ncolumns = pfs_core_column_count(t);
  std::vector<char> wanted(static_cast<std::size_t>(ncolumns), 0);
  for (const char* c : q.columns) wanted[static_cast<std::size_t>(pfs_core_column_find(t, c))] = 1;
  const std::int64_t thread = q.thread_id;
  const std::uint32_t prefix_len =
      q.prefix != nullptr ? static_cast<std::uint32_t>(std::strlen(q.prefix)) : 0;
  std::vector<PfsCoreQual> quals;
  if (q.thread_id != 0)
    quals.push_back(
        PfsCoreQual{pfs_core_column_find(t, "thread_id"), PFS_QUAL_EQ, false, 1, &thread, nullptr, nullptr});
  if (q.prefix != nullptr)
    quals.push_back(PfsCoreQual{pfs_core_column_find(t, "event_name"), PFS_QUAL_PREFIX, true, 1, nullptr,
                                &q.prefix, &prefix_len});
  std::vector<char> is_text(static_cast<std::size_t>(ncolumns));  // the shim's map->cell_text
  for (int c = 0; c < ncolumns; ++c)
    is_text[static_cast<std::size_t>(c)] = pfs_core_column_type(t, c) == PFS_CORE_TEXT;
  std::vector<std::uintptr_t> values(static_cast<std::size_t>(ncolumns));
  std::vector<char> nulls(static_cast<std::size_t>(ncolumns));
  std::uint64_t rows = 0;
  for (auto _ : state) {
    PfsCoreScan* scan =
        pfs_core_scan_begin(region, t, reinterpret_cast<const bool*>(wanted.data()), quals.data(),
                            static_cast<int>(quals.size()), kVarHeader, piece_bytes(), &err);
    if (scan == nullptr) {
      state.SkipWithError(err.message);
      return;
    }
    rows = 0;
    for (;;) {
      const PfsCoreRowset* rs = pfs_core_scan_next(scan, nullptr, &err);
      if (rs == nullptr) {
        state.SkipWithError(err.message);
        break;
      }
      // pfs_row_values: every attribute NULL, then the cells.
      for (std::size_t r = 0; r < rs->nrows; ++r) {
        const PfsCoreCell* cells = rs->cells + r * static_cast<std::size_t>(rs->ncells);
        std::memset(nulls.data(), 1, nulls.size());
        for (int k = 0; k < rs->ncells; ++k) {
          const std::size_t attr = static_cast<std::size_t>(rs->columns[k]);
          nulls[attr] = cells[k].isnull;
          if (cells[k].isnull) {
            values[attr] = 0;
          } else if (is_text[attr]) {
            char* text = rs->text + cells[k].value;
            const auto header = static_cast<std::uint32_t>((kVarHeader + cells[k].len) << 2);  // SET_VARSIZE
            std::memcpy(text, &header, sizeof header);
            values[attr] = reinterpret_cast<std::uintptr_t>(text);
          } else {
            values[attr] = static_cast<std::uintptr_t>(cells[k].value);
          }
        }
        benchmark::DoNotOptimize(values.data());
        benchmark::DoNotOptimize(nulls.data());
      }
      rows += rs->nrows;
      if (rs->last) break;
    }
    pfs_core_scan_end(scan);
  }
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["ns_per_record"] =
      benchmark::Counter(1e6, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  pfs_core_region_forget_all();
}

// SELECT count(*) (the core's part when the scan computes it: rows without cells)
void BM_FdwCoreCount(benchmark::State& state) { run_scan(state, query{{}, 0, nullptr}); }
// SELECT event_id FROM ... WHERE thread_id = -1: no row passes
void BM_FdwCoreNoRowPasses(benchmark::State& state) { run_scan(state, query{{"event_id"}, -1, nullptr}); }
// SELECT event_id, event_name, timer_wait FROM ... WHERE thread_id = 2 (fdw_vs_heap's "where")
void BM_FdwCoreWhere(benchmark::State& state) {
  run_scan(state, query{{"event_id", "event_name", "timer_wait"}, 2, nullptr});
}
// ... WHERE event_name LIKE 'wait/io/%' (fdw_vs_heap's "like")
void BM_FdwCoreLike(benchmark::State& state) {
  run_scan(state, query{{"event_id", "event_name", "timer_wait"}, 0, "wait/io/"});
}
// SELECT * (every column of every row)
void BM_FdwCoreAllColumns(benchmark::State& state) {
  std::vector<const char*> all;
  const int t = history_long();
  for (int c = 0; c < pfs_core_column_count(t); ++c) all.push_back(pfs_core_column_name(t, c));
  run_scan(state, query{all, 0, nullptr});
}
BENCHMARK(BM_FdwCoreCount)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FdwCoreNoRowPasses)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FdwCoreWhere)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FdwCoreLike)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FdwCoreAllColumns)->Unit(benchmark::kMillisecond);

}  // namespace

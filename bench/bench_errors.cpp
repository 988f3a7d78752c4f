// Errors: the cost of one report (pfs_log_error of a declared error, of an error
// never declared, and through pfs::error_def), side by side with time() alone,
// which every report reads for LAST_SEEN. The target: a report costs at
// most 10 ns.
#include <benchmark/benchmark.h>
#include <time.h>

#include "agent/provider/pfs_error.h"
#include "bench_agent.h"

namespace {

void BM_ErrorTime(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(time(nullptr));
}

void BM_ErrorDeclared(benchmark::State& state) {
  pfs::bench::start_agent();
  pfs_register_error(1032, "ER_KEY_NOT_FOUND", "HY000");
  pfs_log_error(1032, PFS_ERROR_RAISED);  // registers the thread
  for (auto _ : state) pfs_log_error(1032, PFS_ERROR_RAISED);
}

void BM_ErrorNotDeclared(benchmark::State& state) {
  pfs::bench::start_agent();
  pfs_log_error(77777, PFS_ERROR_RAISED);
  for (auto _ : state) pfs_log_error(77777, PFS_ERROR_RAISED);
}

void BM_ErrorDef(benchmark::State& state) {
  pfs::bench::start_agent();
  static constinit pfs::error_def deadlock{1213, "ER_LOCK_DEADLOCK", "40001"};
  deadlock.raised();
  for (auto _ : state) deadlock.raised();
}

const bool registered = [] {
  benchmark::RegisterBenchmark("BM_Error/time", BM_ErrorTime);
  benchmark::RegisterBenchmark("BM_Error/declared", BM_ErrorDeclared);
  benchmark::RegisterBenchmark("BM_Error/not_declared", BM_ErrorNotDeclared);
  benchmark::RegisterBenchmark("BM_Error/error_def", BM_ErrorDef);
  return true;
}();

}  // namespace

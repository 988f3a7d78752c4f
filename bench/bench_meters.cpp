// The program's metrics: one update (a counter's add, a gauge's set; integer and
// double) from 1 and 2 threads, side by side with a raw relaxed atomic on one shared
// cache line doing the same (fetch_add, store), in the same run. The target:
// at most 2 ns per update. A counter adds in the thread's own cell (one load and
// one store, no locked instruction), so two threads do not share its line; a gauge
// stores in the metric's record, shared as the raw store's line is. A disabled
// meter's metrics take the same path (updates do not look at ENABLED).
#include <benchmark/benchmark.h>

#include <atomic>
#include <bit>
#include <cstdint>

#include "agent/provider/pfs_meter.h"
#include "agent/region/setup.h"
#include "bench_agent.h"

namespace {

struct alignas(64) shared_line {
  std::atomic<std::int64_t> value{0};
};
shared_line g_raw;

constinit pfs::meter g_meter{"bench", "pfs_bench"};
constinit pfs::meter g_disabled{"bench.disabled", "pfs_bench, disabled from SQL in a program"};
constinit pfs::counter<std::int64_t> g_counter{g_meter, "counter"};
constinit pfs::counter<double> g_counter_double{g_meter, "counter_double"};
constinit pfs::gauge<std::int64_t> g_gauge{g_meter, "gauge"};
constinit pfs::gauge<double> g_gauge_double{g_meter, "gauge_double"};
constinit pfs::counter<std::int64_t> g_disabled_counter{g_disabled, "counter"};

void BM_RawAtomicAdd(benchmark::State& state) {
  for (auto _ : state) g_raw.value.fetch_add(1, std::memory_order_relaxed);
}

// The floors of a double counter's add: a relaxed atomic add of a double
// (std::atomic<double>::fetch_add, a compare-and-swap loop), and the relaxed load,
// add and store on a cell of the thread's own that the counter does, without the
// agent. Back to back on one cell, each add waits for the previous store (store to
// load forwarding) and the floating-point add: their latency, not the agent's work.
alignas(64) std::atomic<double> g_raw_double{0};
void BM_RawAtomicDoubleAdd(benchmark::State& state) {
  for (auto _ : state) g_raw_double.fetch_add(0.5, std::memory_order_relaxed);
}

void BM_RawOwnCellDoubleAdd(benchmark::State& state) {
  alignas(64) static thread_local std::uint64_t cell = 0;
  for (auto _ : state) {
    const double v = std::bit_cast<double>(__atomic_load_n(&cell, __ATOMIC_RELAXED)) + 0.5;
    __atomic_store_n(&cell, std::bit_cast<std::uint64_t>(v), __ATOMIC_RELAXED);
  }
}

void BM_RawAtomicStore(benchmark::State& state) {
  std::int64_t i = 0;
  for (auto _ : state) g_raw.value.store(++i, std::memory_order_relaxed);
}

void BM_CounterAdd(benchmark::State& state) {
  pfs::bench::start_agent();
  g_counter.add(1);  // declares it, registers the thread
  for (auto _ : state) g_counter.add(1);
}

void BM_CounterAddDouble(benchmark::State& state) {
  pfs::bench::start_agent();
  g_counter_double.add(0.5);
  for (auto _ : state) g_counter_double.add(0.5);
}

void BM_GaugeSet(benchmark::State& state) {
  pfs::bench::start_agent();
  g_gauge.set(0);
  std::int64_t i = 0;
  for (auto _ : state) g_gauge.set(++i);
}

void BM_GaugeSetDouble(benchmark::State& state) {
  pfs::bench::start_agent();
  g_gauge_double.set(0);
  double d = 0;
  for (auto _ : state) g_gauge_double.set(d += 1.0);
}

void BM_CounterAddDisabledMeter(benchmark::State& state) {
  pfs::bench::start_agent();
  g_disabled_counter.add(1);
  if (state.thread_index() == 0) {
    const pfs::region_map& r = *pfs::current_region();
    pfs::setup_lock_guard lock(r);
    pfs::setup::set_meter(r, pfs::setup::find_meter(r, "bench.disabled"), 0, -1);
  }
  for (auto _ : state) g_disabled_counter.add(1);
}

const bool registered = [] {
  for (int threads : {1, 2}) {
    benchmark::RegisterBenchmark("BM_Meter/raw_atomic_add", BM_RawAtomicAdd)->Threads(threads);
    benchmark::RegisterBenchmark("BM_Meter/counter_add", BM_CounterAdd)->Threads(threads);
    benchmark::RegisterBenchmark("BM_Meter/counter_add_double", BM_CounterAddDouble)->Threads(threads);
    benchmark::RegisterBenchmark("BM_Meter/raw_atomic_double_add", BM_RawAtomicDoubleAdd)->Threads(threads);
    benchmark::RegisterBenchmark("BM_Meter/raw_own_cell_double_add", BM_RawOwnCellDoubleAdd)
        ->Threads(threads);
    benchmark::RegisterBenchmark("BM_Meter/counter_add_disabled_meter", BM_CounterAddDisabledMeter)
        ->Threads(threads);
    benchmark::RegisterBenchmark("BM_Meter/raw_atomic_store", BM_RawAtomicStore)->Threads(threads);
    benchmark::RegisterBenchmark("BM_Meter/gauge_set", BM_GaugeSet)->Threads(threads);
    benchmark::RegisterBenchmark("BM_Meter/gauge_set_double", BM_GaugeSetDouble)->Threads(threads);
  }
  return true;
}();

}  // namespace

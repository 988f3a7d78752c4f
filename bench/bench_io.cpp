// File io: pread of 4 KiB from the page cache, plain and instrumented (timed,
// current + history), apart and in alternating blocks (BM_FileRead/ab), and the
// event alone around no system call (BM_FileRead/event_only). Table io: one row operation, and one
// 1000-row batch event.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_io.h"
#include "bench_agent.h"

namespace {

struct data_file {
  std::string path = "/tmp/pfs_bench_io_" + std::to_string(getpid()) + ".data";
  data_file() {
    std::vector<char> block(1 << 20, 'x');
    int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0 || ::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) std::exit(1);
    ::close(fd);
  }
  ~data_file() { ::unlink(path.c_str()); }
};

void BM_FileReadRaw(benchmark::State& state) {
  pfs::bench::start_agent();
  data_file f;
  int fd = ::open(f.path.c_str(), O_RDONLY);
  char buf[4096];
  off_t off = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(::pread(fd, buf, sizeof(buf), off));
    off = (off + 4096) & ((1 << 20) - 1);
  }
  ::close(fd);
}

void BM_FileReadTimed(benchmark::State& state) {
  pfs::bench::start_agent();
  data_file f;
  const pfs_key key = pfs::file::register_class("bench", "data");
  int fd = pfs::file::open(key, f.path.c_str(), O_RDONLY);
  char buf[4096];
  off_t off = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(pfs::file::pread(fd, buf, sizeof(buf), off));
    off = (off + 4096) & ((1 << 20) - 1);
  }
  pfs::file::close(fd);
}

// The same 4 KiB preads, plain and instrumented, in alternating blocks of kBlock
// reads in one run (A/B): a noisy machine slows both sides of a pair alike, so the
// median of the pairs' ratios holds where two separate benchmarks drift apart.
// Counters: raw_ns and timed_ns (median ns per read of their blocks) and
// overhead_pct (median of the pairs' (timed / raw - 1) * 100).
void BM_FileReadAB(benchmark::State& state) {
  constexpr int kBlock = 256;
  pfs::bench::start_agent();
  data_file f;
  const pfs_key key = pfs::file::register_class("bench", "data_ab");
  const int raw_fd = ::open(f.path.c_str(), O_RDONLY);
  const int timed_fd = pfs::file::open(key, f.path.c_str(), O_RDONLY);
  char buf[4096];
  off_t off = 0;
  auto block = [&](bool timed) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kBlock; ++i) {
      benchmark::DoNotOptimize(timed ? pfs::file::pread(timed_fd, buf, sizeof(buf), off)
                                     : ::pread(raw_fd, buf, sizeof(buf), off));
      off = (off + 4096) & ((1 << 20) - 1);
    }
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
           kBlock;
  };
  std::vector<double> raw, timed, overhead;
  bool timed_first = false;
  for (auto _ : state) {
    double r, t;
    if (timed_first) {
      t = block(true);
      r = block(false);
    } else {
      r = block(false);
      t = block(true);
    }
    timed_first = !timed_first;
    raw.push_back(r);
    timed.push_back(t);
    overhead.push_back((t / r - 1) * 100);
    state.SetIterationTime((r + t) * kBlock * 1e-9);
  }
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  state.counters["raw_ns"] = median(raw);
  state.counters["timed_ns"] = median(timed);
  state.counters["overhead_pct"] = median(overhead);
  ::close(raw_fd);
  pfs::file::close(timed_fd);
}

// The file read's event alone: the same wait (start, end with 4096 bytes) on the
// same kind of descriptor around no system call, so its data stays in the caches.
// Against BM_FileRead/ab's timed_ns - raw_ns, what the read's system call costs the
// event afterwards (its records and statistics fetched again).
void BM_FileReadEventOnly(benchmark::State& state) {
  pfs::bench::start_agent();
  data_file f;
  const pfs_key key = pfs::file::register_class("bench", "data_event");
  const int fd = pfs::file::open(key, f.path.c_str(), O_RDONLY);
  for (auto _ : state) {
    benchmark::DoNotOptimize(pfs::file::detail::on_fd(
        fd, PFS_FILE_READ, pfs::file::where::current(), [] { return ssize_t{4096}; },
        pfs::file::detail::transferred));
  }
  pfs::file::close(fd);
}

pfs_table* bench_table() {
  pfs::bench::start_agent();
  static pfs_table* t = pfs::table::declare(pfs::table::register_class("bench"), "bench", "t");
  return t;
}

void BM_TableIoTimed(benchmark::State& state) {
  pfs_table* t = bench_table();
  for (auto _ : state) {
    pfs::table::io w(t, PFS_TABLE_FETCH);
  }
}

// One event covering a 1000-row batch (a scan), per batch.
void BM_TableIoBatch(benchmark::State& state) {
  pfs_table* t = bench_table();
  for (auto _ : state) {
    pfs::table::io w(t, PFS_TABLE_FETCH);
    w.rows(1000);
  }
  state.counters["rows_per_iter"] = 1000;
}

// One table lock wait (write normal), timed, on an enabled table.
void BM_TableLockTimed(benchmark::State& state) {
  pfs_table* t = bench_table();
  for (auto _ : state) {
    pfs::table::lock_wait w(t, PFS_TABLE_LOCK_WRITE_NORMAL);
  }
}

const bool registered = [] {
  benchmark::RegisterBenchmark("BM_FileRead/raw", BM_FileReadRaw);
  benchmark::RegisterBenchmark("BM_FileRead/timed", BM_FileReadTimed);
  benchmark::RegisterBenchmark("BM_FileRead/ab", BM_FileReadAB)->UseManualTime();
  benchmark::RegisterBenchmark("BM_FileRead/event_only", BM_FileReadEventOnly);
  benchmark::RegisterBenchmark("BM_TableIo/timed", BM_TableIoTimed);
  benchmark::RegisterBenchmark("BM_TableIo/batch", BM_TableIoBatch);
  benchmark::RegisterBenchmark("BM_TableLock/timed", BM_TableLockTimed);
  return true;
}();

}  // namespace

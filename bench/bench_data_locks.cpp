// Data locks: what the program's lock manager pays per lock — a lock created and
// destroyed (a pop and a push of the free stack under its mutex, the record's
// texts written), a status change (the record's seq and LOCK_STATUS), and a wait
// created and destroyed between two live locks.
#include <benchmark/benchmark.h>

#include "agent/provider/pfs_data_lock.h"
#include "bench_agent.h"

namespace {

pfs_data_lock_desc record_lock(const char* status) {
  pfs_data_lock_desc d{};
  d.engine = "INNODB";
  d.engine_lock_id = "140059:1047:5:4:17:140058";
  d.engine_transaction_id = 1047;
  d.object_schema = "shop";
  d.object_name = "orders";
  d.index_name = "PRIMARY";
  d.lock_type = "RECORD";
  d.lock_mode = "X,REC_NOT_GAP";
  d.lock_status = status;
  d.lock_data = "17";
  return d;
}

void BM_DataLockCreateDestroy(benchmark::State& state) {
  pfs::bench::start_agent();
  const pfs_data_lock_desc d = record_lock("GRANTED");
  pfs_data_lock_destroy(pfs_data_lock_create(&d));  // registers the thread
  for (auto _ : state) {
    pfs_data_lock* l = pfs_data_lock_create(&d);
    benchmark::DoNotOptimize(l);
    pfs_data_lock_destroy(l);
  }
}

void BM_DataLockSetStatus(benchmark::State& state) {
  pfs::bench::start_agent();
  const pfs_data_lock_desc d = record_lock("WAITING");
  pfs_data_lock* l = pfs_data_lock_create(&d);
  bool granted = false;
  for (auto _ : state) {
    pfs_data_lock_set_status(l, granted ? "GRANTED" : "WAITING");
    granted = !granted;
  }
  pfs_data_lock_destroy(l);
}

void BM_DataLockWait(benchmark::State& state) {
  pfs::bench::start_agent();
  const pfs_data_lock_desc held = record_lock("GRANTED");
  const pfs_data_lock_desc want = record_lock("WAITING");
  pfs_data_lock* h = pfs_data_lock_create(&held);
  pfs_data_lock* w = pfs_data_lock_create(&want);
  for (auto _ : state) {
    pfs_data_lock_wait* x = pfs_data_lock_wait_create(w, h);
    benchmark::DoNotOptimize(x);
    pfs_data_lock_wait_destroy(x);
  }
  pfs_data_lock_destroy(w);
  pfs_data_lock_destroy(h);
}

const bool registered = [] {
  benchmark::RegisterBenchmark("BM_DataLock/create_destroy", BM_DataLockCreateDestroy);
  benchmark::RegisterBenchmark("BM_DataLock/set_status", BM_DataLockSetStatus);
  benchmark::RegisterBenchmark("BM_DataLock/wait_create_destroy", BM_DataLockWait);
  benchmark::RegisterBenchmark("BM_DataLock/create_destroy_4_threads", BM_DataLockCreateDestroy)->Threads(4);
  return true;
}();

}  // namespace

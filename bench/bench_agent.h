// The agent of the benchmark binary: started once, with the rules every
// benchmark expects, its region in /tmp removed at exit. Trace files go to
// /dev/shm, so BM_Mutex/traced measures formatting and writing, not the disk.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "agent/provider/pfs.h"

namespace pfs::bench {

inline void start_agent() {
  static const bool started = [] {
    pfs::options o;
    o.region_path = "/tmp/pfs_bench_" + std::to_string(getpid()) + ".region";
    o.remove_at_exit = true;
    o.trace_dir = "/dev/shm/pfs_bench_trace_" + std::to_string(getpid());
    std::system(("mkdir -p " + o.trace_dir).c_str());
    o.instrument =
        "wait/synch/mutex/bench/disabled=OFF,wait/synch/mutex/bench/counted=COUNTED,statement/bench/"
        "disabled=OFF,"
        "stage/bench/disabled=OFF,%=ON";
    // Every consumer on (the units-of-work benchmarks measure the full path).
    // PFS_BENCH_NO_WAITS_HISTORY_LONG=1 turns events_waits_history_long off, to tell
    // the shared long history's part of timed_history from the rest.
    o.consumers =
        "events_stages_current=ON,events_stages_history=ON,events_stages_history_long=ON,"
        "events_statements_history_long=ON,events_transactions_history_long=ON";
    if (std::getenv("PFS_BENCH_NO_WAITS_HISTORY_LONG") != nullptr)
      o.consumers += ",events_waits_history_long=OFF";
    // The wait timer and the CYCLE watch as a program would get them from its
    // environment (bench/cycle_watch_ab.sh compares them).
    if (const char* t = std::getenv("PFS_WAIT_TIMER")) o.wait_timer = t;
    const pfs::options env = pfs::options::from_environment();
    o.sizes = env.sizes;  // PFS_WAITS_HISTORY_LONG_SIZE and the rest, as a program's
    o.cycle_watch = env.cycle_watch;
    o.cycle_watch_interval_ms = env.cycle_watch_interval_ms;
    if (!pfs::init(o)) {
      std::fprintf(stderr, "pfs_bench: agent not started: %s\n", pfs::last_error().c_str());
      std::exit(1);
    }
    std::atexit([] {
      pfs::shutdown();
      std::system(("rm -rf /dev/shm/pfs_bench_trace_" + std::to_string(getpid())).c_str());
    });
    return true;
  }();
  (void)started;
}

}  // namespace pfs::bench

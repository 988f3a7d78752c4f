// pfs_fixture: writes a region file with deterministic content (for the FDW's
// pg_regress suite and benchmark), or a deliberately broken one.
//
//   pfs_fixture [options] PATH
//     --kind=KIND              good (default), bad-magic, bad-version (newer), old-version, too-small,
//                              truncated, array-past-end, inconsistent, garbage
//     --history-long-rows=N    history_long holds N generated completed waits instead
//                              of the standard content's rows (benchmarks)
//     --mode=OCTAL             file mode (default 0644: readable by the postgres user)
//     --pid=N                  the pid in the header (default 4242: several fixtures in one
//                              region directory need their own)
//
// The standard content: 9 instrument classes, 3 threads, running and completed waits
// in the stacks, history rings (one wrapped), history_long (with a file read and a
// table fetch), per-thread and per-instance statistics, sources, setup_actors rows,
// lost counters, two files, a table with two indexes, setup_objects rows, declared
// errors and their counts, the table's lock waits, TLS channels' properties, data locks
// and their waits, metadata locks, the program's meters and metrics. Timers: the
// NANOSECOND converter maps raw value r to (r - 1000) * 1000 picoseconds, so raw times
// below are chosen to give exact picoseconds. pid and creation time are fixed values.
//
// Every record is written through the layout structs, with allocated version+state
// words and even seqlock words, as a provider leaves them between writes. The tool
// exits after writing, so the region's provider is not alive.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "agent/region/region.h"
#include "agent/region/region_layout.h"
#include "tools/fixture/fixture_writer.h"

namespace {

using namespace pfs;
using namespace pfs::layout;
using namespace pfs::fixture;

struct options {
  std::string path;
  std::string kind = "good";
  long long history_long_rows = -1;  // -1: the standard rows
  unsigned mode = 0644;
  std::uint64_t pid = 4242;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "pfs_fixture: %s\n"
               "usage: pfs_fixture [--kind=KIND] [--history-long-rows=N] [--mode=OCTAL] [--pid=N] PATH\n"
               "kinds: good bad-magic bad-version old-version too-small truncated array-past-end "
               "inconsistent garbage\n"
               "       huge-sums (good, with sums of times beyond 2^63 and 2^64 ps)\n",
               why);
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&](std::string_view prefix) { return argv[i] + prefix.size(); };  // NUL-terminated
    if (a.starts_with("--kind=")) {
      o.kind = value("--kind=");
    } else if (a.starts_with("--history-long-rows=")) {
      char* end = nullptr;
      o.history_long_rows = std::strtoll(value("--history-long-rows="), &end, 10);
      if (*end != '\0' || o.history_long_rows < 0 || o.history_long_rows > 10000000) usage("bad row count");
    } else if (a.starts_with("--pid=")) {
      char* end = nullptr;
      o.pid = std::strtoull(value("--pid="), &end, 10);
      if (*end != '\0' || o.pid == 0) usage("bad pid");
    } else if (a.starts_with("--mode=")) {
      o.mode = static_cast<unsigned>(std::strtoul(value("--mode="), nullptr, 8));
    } else if (a.starts_with("--")) {
      usage("unrecognized option");
    } else if (o.path.empty()) {
      o.path = a;
    } else {
      usage("more than one path");
    }
  }
  if (o.path.empty()) usage("no path");
  return o;
}

// Garbage inside the arrays (the header and geometry stay valid):
// - rows the reader must refuse: a history_long wait of class 999, a cond instance
//   of class 0 (the FDW fails the scans of their tables);
// - fields the reader shows sanitized: a history wait with an unknown operation,
//   a negative byte count, a source and a timer out of range; a class name with
//   invalid UTF-8; a thread of a class that does not exist; an owner id above
//   INT64_MAX;
// - a record left half-written (odd seqlock word): skipped as torn.
void add_garbage(region_map& m) {
  region_header& h = m.header();
  auto* hl = m.array<wait_record>(kArrayHistoryLong);
  hl[6] = hl[0];
  hl[6].class_index = 999;
  hl[6].event_id = 99;

  auto* history = m.array<wait_record>(kArrayWaitHistory);
  wait_record& odd = history[0 * h.history_per_thread + 3];
  odd = history[0];
  odd.event_id = odd.end_event_id = 4;
  odd.operation = 200;
  odd.number_of_bytes = -5;
  odd.source_index = 77777;
  odd.timer = 9;
  auto* threads = m.array<thread_record>(kArrayThreads);
  threads[0].history_index = 4;
  threads[2].class_index = 500;

  auto* conds = m.array<sync_instance>(kArrayConds);
  conds[1] = conds[0];
  conds[1].class_index = 0;
  conds[1].identity = 0x4100;
  m.array<sync_instance>(kArrayMutexes)[2].owner_thread_id = UINT64_MAX;

  m.array<class_record>(kArrayClasses)[kIdleLock - 1].name[20] = '\xff';
  m.array<wait_record>(kArrayWaitStacks)[1 * h.wait_stack_depth + 1].seq = 3;
}

void corrupt_file(const options& o, region_map& m) {
  region_header& h = m.header();
  if (o.kind == "bad-magic") {
    std::memcpy(h.magic, "NOTAREGN", 8);
  } else if (o.kind == "bad-version") {
    h.layout_version = 99;  // newer than any reader knows
  } else if (o.kind == "old-version") {
    h.layout_version = 2;
  } else if (o.kind == "array-past-end") {
    h.arrays[kArrayHistoryLong].offset = m.size() - 2 * sizeof(wait_record);
  } else if (o.kind == "inconsistent") {
    h.max_threads = h.max_threads + 1;
  } else if (o.kind == "garbage") {
    add_garbage(m);
  }
}

int truncate_to(const std::string& path, off_t size) {
  if (truncate(path.c_str(), size) != 0) {
    std::fprintf(stderr, "pfs_fixture: could not truncate \"%s\": %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  static constexpr std::string_view kKinds[] = {"good",      "bad-magic", "bad-version",    "old-version",
                                                "too-small", "truncated", "array-past-end", "inconsistent",
                                                "garbage",   "huge-sums"};
  bool known = false;
  for (auto k : kKinds) known = known || k == o.kind;
  if (!known) usage("unrecognized kind");

  region_sizes s;
  s.max_classes = 16;
  s.max_threads = 4;
  s.wait_stack_depth = 3;
  s.history_per_thread = 4;
  s.history_long_size = o.history_long_rows > 10 ? static_cast<std::uint32_t>(o.history_long_rows) : 10;
  s.max_mutexes = 4;
  s.max_rwlocks = 2;
  s.max_conds = 2;
  s.setup_actors_size = 3;
  s.max_sources = 4;
  s.max_files = 2;
  s.max_tables = 2;
  s.max_indexes_per_table = 2;
  s.setup_objects_size = 2;
  s.lock_contention_size = 8;
  s.max_errors = 3;
  s.max_tls_properties = 6;
  s.max_data_locks = 6;
  s.max_data_lock_waits = 3;
  s.max_metadata_locks = 4;
  s.max_accounts = 3;
  s.max_users = 2;
  s.max_hosts = 2;
  s.max_meters = 3;
  s.max_metrics = 6;

  region_error err;  // create replaces an earlier file, unless a live provider owns it
  region_map m = region_map::create(o.path, s, o.mode, err);
  if (err) {
    std::fprintf(stderr, "pfs_fixture: %s\n", err.message.c_str());
    return 1;
  }
  writer w(m, o.pid);
  w.header();
  w.classes();
  w.threads();
  w.sources();
  w.stacks();
  w.history();
  if (o.history_long_rows >= 0)
    w.history_long_generated(static_cast<std::uint64_t>(o.history_long_rows));
  else
    w.history_long_standard();
  w.instances();
  w.files();
  w.tables();
  w.table_locks();
  w.thread_stats();
  w.actors();
  w.errors();
  w.accounts();
  w.tls();
  w.data_locks();
  w.metadata_locks();
  w.meters();
  if (o.kind == "huge-sums") w.huge_sums();
  corrupt_file(o, m);
  const auto size = static_cast<off_t>(m.size());
  m = region_map();  // unmap, close: the alive lock goes with it

  if (o.kind == "too-small") return truncate_to(o.path, 100);
  if (o.kind == "truncated") return truncate_to(o.path, size / 2);
  return 0;
}

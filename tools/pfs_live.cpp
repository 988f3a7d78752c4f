// pfs_live: a long-running instrumented process for the end-to-end, load and trace
// tests of setup changes from SQL (tests/live/fdw_live_test.sh, fdw_load_test.sh,
// fdw_trace_test.sh). It records waits until it is stopped (SIGTERM, SIGINT) or its
// time is up, so a PostgreSQL session can change its setup while it runs:
//
//   hot threads     lock and unlock live/hot_lock (and read-lock live/hot_rw) in
//                   paced bursts: counts that grow while the class is enabled
//   slow pair       one thread holds live/slow_lock for --hold-us while the other
//                   waits for it: TIMER_WAIT of about that much, for any wait timer
//   probe           (--probe-file) spins on the derived flags of live/probe_lock and
//                   appends "enabled <ns>" / "disabled <ns>" (CLOCK_REALTIME) to the
//                   file the moment they change, locking the mutex all the while:
//                   how long a committed change takes to reach a running provider
//   burst           (--burst-file) waits for the file to exist, then starts
//                   --burst-threads threads that each lock live/burst_lock
//                   --burst-ops times and exit (their trace files are complete
//                   then), and writes "<file>.done"
//   metrics         meter "live" (FREQUENCY 1): the counter hot_bursts (one per
//                   burst of a hot thread), the gauge hot_threads, and the observed
//                   gauge observations, whose value is the number of times the
//                   agent's meter thread read it (it stops growing while the meter
//                   is disabled from SQL)
//   deadlocks       (--deadlocks=2,3) for each length N, N threads each lock
//                   their own live/deadlockN_lock and then the next one's: a
//                   cycle in the wait-for graph that lasts until the process is
//                   killed (it then ends with _exit: the threads never return)
//
//   PFS_REGION=/path pfs_live [--seconds=N] [--hot-threads=N] [--burst-ops-per-ms=N]
//       [--slow=0|1] [--hold-us=N] [--probe-file=PATH] [--burst-file=PATH]
//       [--burst-threads=N] [--burst-ops=N] [--deadlocks=N,...] [--group=NAME]
//
// Defaults when the variables are not set: PFS_INSTRUMENT='%=ON', and the region
// mode 0660 with the group of --group (default "postgres" when that group exists),
// so the PostgreSQL server can write the setup.
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_meter.h"

namespace {

using clock_type = std::chrono::steady_clock;

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true); }

struct settings {
  int seconds = 0;  // 0: until stopped
  int hot_threads = 2;
  int ops_per_ms = 200;  // per hot thread
  bool slow = true;
  int hold_us = 2000;
  std::string probe_file;
  std::string burst_file;
  int burst_threads = 4;
  int burst_ops = 1000;
  std::vector<int> deadlocks;  // cycle lengths
  std::string group = "postgres";
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "pfs_live: %s\n"
               "usage: PFS_REGION=/path pfs_live [--seconds=N] [--hot-threads=N] [--burst-ops-per-ms=N]\n"
               "       [--slow=0|1] [--hold-us=N] [--probe-file=PATH] [--burst-file=PATH]\n"
               "       [--burst-threads=N] [--burst-ops=N] [--deadlocks=N,...] [--group=NAME]\n",
               why);
  std::exit(2);
}

settings parse(int argc, char** argv) {
  settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto number = [&](std::string_view prefix) {
      char* end = nullptr;
      const long v = std::strtol(argv[i] + prefix.size(), &end, 10);
      if (*end != '\0' || v < 0) usage("bad number");
      return static_cast<int>(v);
    };
    auto text = [&](std::string_view prefix) { return std::string(a.substr(prefix.size())); };
    if (a.starts_with("--seconds="))
      s.seconds = number("--seconds=");
    else if (a.starts_with("--hot-threads="))
      s.hot_threads = number("--hot-threads=");
    else if (a.starts_with("--burst-ops-per-ms="))
      s.ops_per_ms = number("--burst-ops-per-ms=");
    else if (a.starts_with("--slow="))
      s.slow = number("--slow=") != 0;
    else if (a.starts_with("--hold-us="))
      s.hold_us = number("--hold-us=");
    else if (a.starts_with("--probe-file="))
      s.probe_file = text("--probe-file=");
    else if (a.starts_with("--burst-file="))
      s.burst_file = text("--burst-file=");
    else if (a.starts_with("--burst-threads="))
      s.burst_threads = number("--burst-threads=");
    else if (a.starts_with("--burst-ops="))
      s.burst_ops = number("--burst-ops=");
    else if (a.starts_with("--deadlocks=")) {
      const std::string list = text("--deadlocks=");
      for (std::size_t at = 0; at < list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const int n = std::atoi(list.substr(at, comma - at).c_str());
        if (n < 2 || n > 8) usage("--deadlocks: cycle lengths from 2 to 8");
        s.deadlocks.push_back(n);
        at = comma + 1;
      }
    } else if (a.starts_with("--group="))
      s.group = text("--group=");
    else
      usage("unrecognized argument");
  }
  return s;
}

std::uint64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

void sleep_for_us(long us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

struct objects {
  pfs::mutex hot{"live", "hot_lock"};
  pfs::shared_mutex hot_rw{"live", "hot_rw"};
  pfs::mutex slow{"live", "slow_lock"};
  pfs::mutex burst{"live", "burst_lock"};
  std::atomic<std::uint64_t> hot_ops{0};
};

constinit pfs::meter g_live_meter{"live", "pfs_live's own numbers", 1};
constinit pfs::counter<std::int64_t> g_hot_bursts{g_live_meter, "hot_bursts", "{burst}",
                                                  "bursts of lock operations of the hot threads"};
constinit pfs::gauge<std::int64_t> g_hot_threads{g_live_meter, "hot_threads", "{thread}",
                                                 "hot threads started"};

void hot_worker(objects& o, int ops_per_ms) {
  pfs::register_thread("live", "hot");
  std::uint64_t x = 1;
  while (!g_stop.load(std::memory_order_relaxed)) {
    for (int i = 0; i < ops_per_ms; ++i) {
      o.hot.lock();
      x = x * 6364136223846793005u + 1;
      o.hot.unlock();
      if (i % 8 == 0) {
        o.hot_rw.lock_shared();
        o.hot_rw.unlock_shared();
      }
    }
    o.hot_ops.fetch_add(static_cast<std::uint64_t>(ops_per_ms), std::memory_order_relaxed);
    g_hot_bursts.add(1);
    sleep_for_us(1000);
  }
  if (x == 0) std::puts("");  // keep x alive
  pfs::unregister_thread();
}

void slow_holder(objects& o, int hold_us) {
  pfs::register_thread("live", "slow_holder");
  while (!g_stop.load(std::memory_order_relaxed)) {
    o.slow.lock();
    sleep_for_us(hold_us);
    o.slow.unlock();
    sleep_for_us(hold_us / 2);
  }
  pfs::unregister_thread();
}

void slow_waiter(objects& o, int hold_us) {
  pfs::register_thread("live", "slow_waiter");
  while (!g_stop.load(std::memory_order_relaxed)) {
    sleep_for_us(hold_us / 4);
    o.slow.lock();  // usually waits for the holder
    o.slow.unlock();
  }
  pfs::unregister_thread();
}

// Spins on the derived flags of live/probe_lock, locking it all the while, and logs
// each change with the time it was seen.
void probe(const std::string& path) {
  pfs::register_thread("live", "probe");
  const pfs_key key = pfs_register_mutex("live", "probe_lock");
  pfs::mutex m(key);
  const volatile unsigned char* flags = pfs_class_flags(key);
  // O_NOFOLLOW: a link planted at the path is not written through (issue 42).
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  FILE* out = fd >= 0 ? fdopen(fd, "a") : nullptr;
  if (out == nullptr) {
    std::perror(path.c_str());
    std::exit(1);
  }
  bool enabled = (*flags & PFS_ENABLED) != 0;
  std::fprintf(out, "%s %llu\n", enabled ? "enabled" : "disabled",
               static_cast<unsigned long long>(realtime_ns()));
  std::fflush(out);
  while (!g_stop.load(std::memory_order_relaxed)) {
    m.lock();
    m.unlock();
    const bool now = (*flags & PFS_ENABLED) != 0;
    if (now != enabled) {
      const std::uint64_t t = realtime_ns();
      enabled = now;
      std::fprintf(out, "%s %llu\n", enabled ? "enabled" : "disabled", static_cast<unsigned long long>(t));
      std::fflush(out);
    }
  }
  std::fclose(out);
  pfs::unregister_thread();
}

void burst_worker(objects& o, int ops) {
  pfs::register_thread("live", "burst");
  for (int i = 0; i < ops; ++i) {
    o.burst.lock();
    o.burst.unlock();
  }
  pfs::unregister_thread();  // closes (flushes) the thread's trace file
}

void burst(objects& o, const settings& s) {
  struct stat st {};
  while (!g_stop.load() && stat(s.burst_file.c_str(), &st) != 0) sleep_for_us(10000);
  if (g_stop.load()) return;
  std::vector<std::thread> threads;
  for (int i = 0; i < s.burst_threads; ++i) threads.emplace_back(burst_worker, std::ref(o), s.burst_ops);
  for (auto& t : threads) t.join();
  const std::string done = s.burst_file + ".done";
  const int fd = ::open(done.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0) ::close(fd);
}

// A cycle of n threads over n locks: thread k holds lock k, then waits for lock
// k + 1 (mod n), which thread k + 1 holds. Never undone: the objects are leaked
// and the threads detached.
void start_deadlock(int n) {
  const std::string name = "deadlock" + std::to_string(n) + "_lock";
  auto* locks = new std::vector<std::unique_ptr<pfs::mutex>>();
  for (int k = 0; k < n; ++k) locks->push_back(std::make_unique<pfs::mutex>("live", name.c_str()));
  auto* holding = new std::atomic<int>(0);
  for (int k = 0; k < n; ++k)
    std::thread([locks, holding, n, k] {
      pfs::register_thread("live", "deadlocked");
      (*locks)[static_cast<std::size_t>(k)]->lock();
      holding->fetch_add(1);
      while (holding->load() < n) sleep_for_us(1000);
      (*locks)[static_cast<std::size_t>((k + 1) % n)]->lock();  // never returns
    }).detach();
}

// The region's group, so the PostgreSQL server's user may write the setup.
void share_region(const std::string& group) {
  const pfs::region_map* r = pfs::current_region();
  if (r == nullptr || group.empty()) return;
  if (const struct group* g = getgrnam(group.c_str())) {
    if (chown(r->path().c_str(), static_cast<uid_t>(-1), g->gr_gid) != 0)
      std::fprintf(stderr, "pfs_live: could not give the region to group %s\n", group.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const settings s = parse(argc, argv);
  std::string warnings;
  pfs::options o = pfs::options::from_environment(&warnings);
  if (!warnings.empty()) std::fprintf(stderr, "pfs_live: %s\n", warnings.c_str());
  if (o.region_path.empty()) usage("set PFS_REGION to the path of the region file to write");
  if (std::getenv("PFS_INSTRUMENT") == nullptr) o.instrument = "%=ON";
  if (!pfs::init(o)) {
    std::fprintf(stderr, "pfs_live: the agent did not start: %s\n", pfs::last_error().c_str());
    return 1;
  }
  if (std::getenv("PFS_REGION_MODE") == nullptr) share_region(s.group);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  pfs::register_thread("live", "main");
  g_hot_threads.set(s.hot_threads);
  std::atomic<std::int64_t> observations{0};
  pfs::observed_gauge<std::int64_t> observed{g_live_meter, "observations", "{call}",
                                             "times the meter thread read this gauge",
                                             [&observations] { return ++observations; }};
  {
    objects obj;
    std::vector<std::thread> threads;
    for (int i = 0; i < s.hot_threads; ++i) threads.emplace_back(hot_worker, std::ref(obj), s.ops_per_ms);
    if (s.slow) {
      threads.emplace_back(slow_holder, std::ref(obj), s.hold_us);
      threads.emplace_back(slow_waiter, std::ref(obj), s.hold_us);
    }
    if (!s.probe_file.empty()) threads.emplace_back(probe, s.probe_file);
    if (!s.burst_file.empty()) threads.emplace_back(burst, std::ref(obj), std::cref(s));
    for (int n : s.deadlocks) start_deadlock(n);
    std::printf("pfs_live: pid %d, %zu threads, region %s\n", static_cast<int>(getpid()), threads.size(),
                o.region_path.c_str());
    std::fflush(stdout);
    const auto end = clock_type::now() + std::chrono::seconds(s.seconds);
    while (!g_stop.load() && (s.seconds == 0 || clock_type::now() < end)) sleep_for_us(20000);
    g_stop.store(true);
    for (auto& t : threads) t.join();
    std::printf("pfs_live: %llu hot lock/unlock pairs\n",
                static_cast<unsigned long long>(obj.hot_ops.load()));
    if (!s.deadlocks.empty()) {
      std::fflush(stdout);
      std::_Exit(0);  // deadlocked threads cannot be joined, nor their locks destroyed
    }
  }
  pfs::shutdown();
  return 0;
}

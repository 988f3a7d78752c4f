// pfs_demo: a small multi-threaded program instrumented with the agent, for the
// README demo. A producer and two consumers share a bounded queue (pfs::mutex and
// two pfs::condition_variable); two readers and a writer share a cache
// (pfs::shared_mutex); everyone bumps a shared counter (pfs::mutex). It runs for a
// few seconds and exits, leaving its region behind for the FDW to read.
//
// Each unit of work is a statement (a request) with stages inside, the way a
// server would mark its requests: the producer's "INSERT INTO queue", the
// consumers' "INSERT INTO cache" inside a transaction, the readers' "SELECT ...
// FROM cache". The waits nest in them, so SQL can tell which kind of request
// waited on which lock.
//
//   PFS_REGION=/tmp/demo/app.pfs pfs_demo [--seconds=N]
//
// Defaults when the variables are not set: PFS_INSTRUMENT='%=ON' (every
// instrument enabled and timed), PFS_CONSUMERS with every consumer on but
// events_statements_cpu and PFS_REGION_GROUP=postgres with mode 0660
// (readable and writable by the postgres user).
#include <grp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "agent/provider/pfs.h"

namespace {

using clock_type = std::chrono::steady_clock;

// A little CPU work, so locks are held for a while.
std::uint64_t work(std::uint64_t seed, int rounds) {
  std::uint64_t x = seed | 1;
  for (int i = 0; i < rounds; ++i) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return x;
}

struct work_queue {
  pfs::mutex lock{"demo", "queue_lock"};
  pfs::condition_variable not_empty{"demo", "queue_not_empty"};
  pfs::condition_variable not_full{"demo", "queue_not_full"};
  std::deque<std::uint64_t> items;
  bool closed = false;
  static constexpr std::size_t kCapacity = 16;

  void push(std::uint64_t item) {
    pfs::unique_lock l(lock);
    not_full.wait(l, [this] { return items.size() < kCapacity; });
    items.push_back(item);
    not_empty.notify_one();
  }
  // False once the queue is closed and empty.
  bool pop(std::uint64_t& item) {
    pfs::unique_lock l(lock);
    not_empty.wait(l, [this] { return !items.empty() || closed; });
    if (items.empty()) return false;
    item = items.front();
    items.pop_front();
    not_full.notify_one();
    return true;
  }
  void close() {
    pfs::unique_lock l(lock);
    closed = true;
    not_empty.notify_all();
  }
};

struct cache {
  pfs::shared_mutex lock{"demo", "cache_lock"};
  std::unordered_map<std::uint64_t, std::uint64_t> entries;

  bool lookup(std::uint64_t key, std::uint64_t& value) {
    lock.lock_shared();
    auto it = entries.find(key);
    const bool found = it != entries.end();
    if (found) value = work(it->second, 200);
    lock.unlock_shared();
    return found;
  }
  void store(std::uint64_t key, std::uint64_t value) {
    lock.lock();
    entries[key % 4096] = work(value, 400);
    lock.unlock();
  }
};

struct counters {
  pfs::mutex lock{"demo", "stats_lock"};
  std::uint64_t produced = 0, consumed = 0, hits = 0, misses = 0;
};

struct shared_state {
  work_queue queue;
  cache data;
  counters stats;
  std::atomic<bool> stop{false};
};

// The kinds of work the demo's threads do (statement/demo/...) and their phases
// (stage/demo/...).
struct work_classes {
  pfs::statement_class produce{"demo", "produce"};
  pfs::statement_class consume{"demo", "consume"};
  pfs::statement_class lookup{"demo", "lookup"};
  pfs::stage_class computing{"demo", "computing"};
  pfs::stage_class enqueueing{"demo", "enqueueing"};
  pfs::stage_class waiting_for_work{"demo", "waiting for work"};
  pfs::stage_class storing{"demo", "storing"};
  pfs::stage_class reading{"demo", "reading cache"};
  pfs::stage_class counting{"demo", "updating statistics"};
};

void producer(shared_state& s, const work_classes& w) {
  pfs::register_thread("demo", "producer");
  pfs::set_thread_connection(1);
  for (std::uint64_t i = 1; !s.stop.load(std::memory_order_relaxed); ++i) {
    pfs::statement q(w.produce, "demo");
    q.text("INSERT INTO queue VALUES (" + std::to_string(i) + ")");
    // The request's W3C trace context, as a service gets it from its caller: the
    // statement's spans (pfs_otlp) join that trace.
    char traceparent[64];
    std::snprintf(traceparent, sizeof traceparent, "00-4bf92f3577b34da6a3ce929d%08llx-00f067aa%08llx-01",
                  static_cast<unsigned long long>(i), static_cast<unsigned long long>(i));
    q.traceparent(traceparent);
    pfs::set_stage(w.computing);
    const std::uint64_t item = work(i, 300);
    pfs::set_stage(w.enqueueing);
    s.queue.push(item);
    pfs::set_stage(w.counting);
    pfs::lock_guard g(s.stats.lock);
    ++s.stats.produced;
    q.rows(1, 0, 0);
  }
  s.queue.close();
  pfs::unregister_thread();
}

void consumer(shared_state& s, const work_classes& w, std::uint64_t connection) {
  pfs::register_thread("demo", "consumer");
  pfs::set_thread_connection(connection);
  std::uint64_t item = 0;
  for (;;) {
    pfs::statement q(w.consume, "demo");
    pfs::set_stage(w.waiting_for_work);
    if (!s.queue.pop(item)) break;
    q.text("INSERT INTO cache (k, v) VALUES (" + std::to_string(item % 4096) + ", " + std::to_string(item) +
           ")");
    pfs::set_stage(w.computing);
    const std::uint64_t value = work(item, 2000);
    {
      pfs::transaction trx;
      pfs::set_stage(w.storing);
      s.data.store(item, value);
      trx.commit();
    }
    pfs::set_stage(w.counting);
    pfs::lock_guard g(s.stats.lock);
    ++s.stats.consumed;
    q.rows(1, 0, 1);
  }
  pfs::unregister_thread();
}

void cache_reader(shared_state& s, const work_classes& w, std::uint64_t seed) {
  pfs::register_thread("demo", "cache_reader");
  pfs::set_thread_connection(10 + seed);
  std::uint64_t key = seed, value = 0;
  while (!s.stop.load(std::memory_order_relaxed)) {
    key = work(key, 5);
    pfs::statement q(w.lookup, "demo");
    q.text("SELECT v FROM cache WHERE k = " + std::to_string(key % 4096));
    pfs::set_stage(w.reading);
    const bool hit = s.data.lookup(key % 4096, value);
    pfs::set_stage(w.counting);
    pfs::lock_guard g(s.stats.lock);
    ++(hit ? s.stats.hits : s.stats.misses);
    q.rows(0, hit ? 1 : 0, 1);
    if (!hit) q.warnings(1);  // a miss counts as a warning, to fill statements_with_errors_or_warnings
  }
  pfs::unregister_thread();
}

int parse_seconds(int argc, char** argv) {
  int seconds = 5;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.starts_with("--seconds=")) {
      seconds = std::atoi(argv[i] + std::strlen("--seconds="));
    } else {
      std::fprintf(stderr, "usage: PFS_REGION=/path pfs_demo [--seconds=N]\n");
      std::exit(2);
    }
  }
  return seconds > 0 ? seconds : 5;
}

}  // namespace

int main(int argc, char** argv) {
  const int seconds = parse_seconds(argc, argv);
  std::string warnings;
  pfs::options o = pfs::options::from_environment(&warnings);
  if (!warnings.empty()) std::fprintf(stderr, "pfs_demo: %s\n", warnings.c_str());
  if (o.region_path.empty()) {
    std::fprintf(stderr, "pfs_demo: set PFS_REGION to the path of the region file to write\n");
    return 2;
  }
  if (std::getenv("PFS_INSTRUMENT") == nullptr) o.instrument = "%=ON";
  // Every consumer, stages and the long histories too (MySQL ships them off).
  if (std::getenv("PFS_CONSUMERS") == nullptr)
    o.consumers =
        "events_stages_current=ON,events_stages_history=ON,events_stages_history_long=ON,"
        "events_statements_history_long=ON,events_transactions_history_long=ON";
  // Readable and writable (setup UPDATEs) by the PostgreSQL server through its group.
  if (std::getenv("PFS_REGION_GROUP") == nullptr && getgrnam("postgres") != nullptr) o.group = "postgres";
  if (!pfs::init(o)) {
    std::fprintf(stderr, "pfs_demo: the agent did not start: %s\n", pfs::last_error().c_str());
    return 1;
  }
  pfs::register_thread("demo", "main");

  {
    shared_state s;  // instrumented objects: built after init
    const work_classes w;
    std::vector<std::thread> threads;
    threads.emplace_back(producer, std::ref(s), std::cref(w));
    threads.emplace_back(consumer, std::ref(s), std::cref(w), 2);
    threads.emplace_back(consumer, std::ref(s), std::cref(w), 3);
    threads.emplace_back(cache_reader, std::ref(s), std::cref(w), 1);
    threads.emplace_back(cache_reader, std::ref(s), std::cref(w), 2);
    std::printf("pfs_demo: %zu threads running for %d s, region %s\n", threads.size(), seconds,
                o.region_path.c_str());
    std::fflush(stdout);
    std::this_thread::sleep_until(clock_type::now() + std::chrono::seconds(seconds));
    s.stop = true;
    for (auto& t : threads) t.join();
    std::printf(
        "pfs_demo: produced %llu, consumed %llu, cache hits %llu, misses %llu\n",
        static_cast<unsigned long long>(s.stats.produced), static_cast<unsigned long long>(s.stats.consumed),
        static_cast<unsigned long long>(s.stats.hits), static_cast<unsigned long long>(s.stats.misses));
  }
  pfs::shutdown();
  return 0;
}

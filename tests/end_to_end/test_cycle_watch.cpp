// CYCLE on machines whose kernel does not vouch for the TSC (issue 17, item 1): the
// rate check fed with injected clocks, calibration epochs in a real region read back
// by the reader (an injected rate change: conversions follow within the bound, no
// negative or absurd TIMER_WAIT across a recalibration), a damaged epoch table, and
// the agent's watch thread in a live process.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/reader/reader.h"
#include "agent/region/cycle_epochs.h"
#include "agent/region/region.h"
#include "agent/region/region_builder.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"
#include "timers/cycle_watch.h"
#include "timers/timer.h"

namespace {

using namespace pfs;
using namespace pfs::layout;
using pfs::reader::region_reader;
using pfs::reader::row;
using pfs::reader::table_id;
using timers::cycle_rate_watch;
using timers::detail::clock_pair;

constexpr double kF0 = 3e9;  // the counter's rate at start-up, Hz
constexpr std::uint64_t kBase = 1000;
constexpr int kCycle = static_cast<int>(timers::timer_kind::cycle);

// An injected counter: kF0 until change_ns, then kF0 * (1 + ppm / 1e6).
struct fake_counter {
  std::uint64_t change_ns = ~std::uint64_t{0};
  double ppm = 0;
  std::uint64_t at(std::uint64_t ns) const {
    if (ns <= change_ns)
      return kBase + static_cast<std::uint64_t>(std::llround(kF0 * static_cast<double>(ns) / 1e9));
    const std::uint64_t before = at(change_ns);
    const double f1 = kF0 * (1 + ppm / 1e6);
    return before + static_cast<std::uint64_t>(std::llround(f1 * static_cast<double>(ns - change_ns) / 1e9));
  }
  clock_pair pair(std::uint64_t ns, std::uint64_t gap = 1000) const { return {ns, at(ns), gap}; }
};

constexpr std::uint64_t kSecond = 1'000'000'000;

// ---------------------------------------------------------------------------
// The rate check alone

TEST(CycleRateWatch, SteadyRateNeverRecalibrates) {
  const fake_counter c;
  cycle_rate_watch w(kF0, c.pair(0));
  for (int k = 1; k <= 10; ++k) {
    const auto o = w.observe(c.pair(k * 2 * kSecond));
    EXPECT_TRUE(o.checked);
    EXPECT_FALSE(o.recalibrate);
    EXPECT_LT(std::fabs(o.drift_ppm), 0.01);
  }
}

TEST(CycleRateWatch, ARateChangeIsFollowedFromTheLastGoodPair) {
  fake_counter c;
  c.change_ns = 6 * kSecond;  // exactly at a check: one recalibration, exact
  c.ppm = 150;
  cycle_rate_watch w(kF0, c.pair(0));
  for (int k = 1; k <= 3; ++k) EXPECT_FALSE(w.observe(c.pair(k * 2 * kSecond)).recalibrate);
  const auto o = w.observe(c.pair(8 * kSecond));
  ASSERT_TRUE(o.checked);
  EXPECT_TRUE(o.recalibrate);
  EXPECT_NEAR(o.drift_ppm, 150, 0.01);
  EXPECT_EQ(o.from_counter, c.at(6 * kSecond));
  EXPECT_NEAR(w.frequency(), kF0 * (1 + 150e-6), 1.0);
  EXPECT_FALSE(w.observe(c.pair(10 * kSecond)).recalibrate);  // the new rate holds
}

TEST(CycleRateWatch, SmallDriftIsMeasuredNotCorrected) {
  fake_counter c;
  c.change_ns = 0;
  c.ppm = 5;  // below the 20 ppm threshold
  cycle_rate_watch w(kF0, c.pair(0));
  const auto o = w.observe(c.pair(2 * kSecond));
  EXPECT_TRUE(o.checked);
  EXPECT_FALSE(o.recalibrate);
  EXPECT_NEAR(o.drift_ppm, 5, 0.01);
}

TEST(CycleRateWatch, BadPairsAreRefused) {
  const fake_counter c;
  cycle_rate_watch w(kF0, c.pair(0));
  // Too close: the older pair is kept, and the next check measures the longer interval.
  EXPECT_FALSE(w.observe(c.pair(kSecond / 100)).checked);
  // Too uncertain (a 200 us gap over 2 s is 100 ppm): waits for a better pair.
  EXPECT_FALSE(w.observe(c.pair(2 * kSecond, 200'000)).checked);
  EXPECT_TRUE(w.observe(c.pair(3 * kSecond)).checked);
  // A jump (a paused guest, a TSC reset) is not a rate: refused, checking restarts.
  clock_pair jump = c.pair(5 * kSecond);
  jump.counter += 3 * static_cast<std::uint64_t>(kF0);
  EXPECT_FALSE(w.observe(jump).checked);
  clock_pair after = c.pair(7 * kSecond);
  after.counter += 3 * static_cast<std::uint64_t>(kF0);
  const auto o = w.observe(after);
  EXPECT_TRUE(o.checked);
  EXPECT_FALSE(o.recalibrate);
  // A counter that went back restarts too.
  EXPECT_FALSE(w.observe(c.pair(9 * kSecond)).checked);
  EXPECT_TRUE(w.observe(c.pair(11 * kSecond)).checked);
}

// ---------------------------------------------------------------------------
// Epochs in a region, read back

class CycleEpochsTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = testing::TempDir() + "pfs_epochs_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/region";
    region_sizes s;
    s.max_classes = 4;
    s.max_threads = 2;
    s.history_per_thread = 2;
    s.history_long_size = 64;
    region_error err;
    map_ = region_map::create(path_, s, 0600, err);
    ASSERT_FALSE(err) << err.message;
    auto& h = map_.header();
    const timers::pico_converter conv = timers::make_converter(kF0, kBase);
    h.timers[kCycle] = {conv.base, conv.mult, conv.shift, 1, kF0};
    region_builder b(map_);
    b.set_class(1, kKindMutex, "wait/synch/mutex/test/m", kFlagEnabled | kFlagTimed);
    b.set_thread(0, 0, 1);
  }
  void TearDown() override {
    map_ = region_map();
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }

  // A completed CYCLE-timed wait in history_long slot `slot`.
  void wait_at(std::uint64_t slot, std::uint64_t raw_start, std::uint64_t raw_end) {
    wait_record& w = region_builder(map_).wait_slot(kArrayHistoryLong, slot, 6);
    w.state = kWaitCompleted;
    w.thread_id = 1;
    w.event_id = slot + 1;
    w.end_event_id = slot + 1;
    w.class_index = 1;
    w.operation = kOpLock;
    w.number_of_bytes = -1;
    w.timer = kCycle;
    w.timer_start = raw_start;
    w.timer_end = raw_end;
  }

  std::vector<row> scan(table_id id) {
    region_error err;
    auto r = region_reader::open(path_, false, err);
    EXPECT_TRUE(r) << err.message;
    std::vector<row> rows;
    if (r) {
      EXPECT_FALSE(r->scan(reader::table(id), rows));
    }
    return rows;
  }

  // Feeds the watch a pair every 2 s of injected time up to end_ns, publishing
  // epochs as the agent's thread does; returns the number of recalibrations.
  int run_watch(const fake_counter& c, std::uint64_t end_ns) {
    cycle_rate_watch w(kF0, c.pair(0));
    int n = 0;
    for (std::uint64_t t = 2 * kSecond; t <= end_ns; t += 2 * kSecond) {
      const auto o = w.observe(c.pair(t));
      if (!o.recalibrate) continue;
      EXPECT_NE(publish_cycle_epoch(map_.header(), o.from_counter, o.measured_hz), 0u);
      ++n;
    }
    return n;
  }

  std::string dir_, path_;
  region_map map_;
};

TEST_F(CycleEpochsTest, AnInjectedRateChangeIsFollowedWithinTheBound) {
  fake_counter c;
  c.change_ns = 5 * kSecond + kSecond / 2;   // between two checks
  c.ppm = 500;                               // a migration to a host 0.05% faster
  EXPECT_EQ(run_watch(c, 12 * kSecond), 2);  // the mixed interval, then the new rate
  EXPECT_EQ(map_.header().cycle_epoch_count, 2u);

  // Waits of 1 ms every 0.25 s, some across the change and across both epochs' starts.
  std::vector<std::uint64_t> starts;
  for (std::uint64_t t = kSecond / 4; t < 12 * kSecond; t += kSecond / 4)
    starts.push_back(t - kSecond / 2000);
  ASSERT_LE(starts.size(), 64u);
  for (std::size_t i = 0; i < starts.size(); ++i)
    wait_at(i, c.at(starts[i]), c.at(starts[i] + kSecond / 1000));

  const std::vector<row> rows = scan(table_id::events_waits_history_long);
  ASSERT_EQ(rows.size(), starts.size());
  const timers::pico_converter base{map_.header().timers[kCycle].base, map_.header().timers[kCycle].mult,
                                    map_.header().timers[kCycle].shift};
  std::int64_t last_start = -1;
  double worst = 0, worst_late = 0;
  for (const row& x : rows) {
    const std::size_t i = static_cast<std::size_t>(x[1].i - 1);
    const double truth_ps = static_cast<double>(starts[i]) * 1000.0;
    const double error = std::fabs(static_cast<double>(x[5].i) - truth_ps);
    worst = std::max(worst, error);
    if (starts[i] > 8 * kSecond) worst_late = std::max(worst_late, error);
    // TIMER_WAIT: 1 ms within 0.05% (the rate in force), never negative or absurd.
    EXPECT_NEAR(static_cast<double>(x[7].i), 1e9, 1e9 * 5e-4) << "wait " << i;
    EXPECT_GT(x[5].i, last_start) << "TIMER_START goes back at wait " << i;
    last_start = x[5].i;
    // The provider converts absolute values the same way (trace files, statement times).
    EXPECT_EQ(static_cast<std::int64_t>(cycle_to_pico(map_.header(), base, c.at(starts[i]))), x[5].i);
  }
  // Bound: the drift times one check interval (500 ppm x 2 s = 1 ms); after the second
  // check the new rate converts exactly (to the multiplier's rounding).
  EXPECT_LT(worst, 1e9) << "worst error " << worst << " ps";
  EXPECT_LT(worst_late, 1e6) << "worst error after the recalibration " << worst_late << " ps";
  // Without the epochs the same values would be off by 500 ppm x 6.5 s: the test can fail.
  const double stale = static_cast<double>(base.to_pico(c.at(12 * kSecond))) - 12e12;
  EXPECT_GT(std::fabs(stale), 3e9);

  // performance_timers shows the rate in force; status the checks' outcome.
  for (const row& x : scan(table_id::performance_timers)) {
    if (x[0].s == "CYCLE") {
      EXPECT_NEAR(static_cast<double>(x[1].i), kF0 * (1 + 500e-6), 2.0);
    }
  }
  bool seen = false;
  for (const row& x : scan(table_id::status)) {
    if (x[0].s == "cycle_recalibrations") {
      EXPECT_EQ(x[1].i, 2);
      seen = true;
    }
  }
  EXPECT_TRUE(seen);
}

TEST_F(CycleEpochsTest, ManyEpochsKeepTheLastSlotsAndStayMonotonic) {
  auto& h = map_.header();
  std::uint64_t raw = kBase;
  for (int k = 0; k < 40; ++k) {  // more epochs than slots
    raw += static_cast<std::uint64_t>(kF0);
    ASSERT_NE(publish_cycle_epoch(h, raw, kF0 * (1 + (k % 2 == 0 ? 300e-6 : -300e-6))), 0u);
  }
  epoch_copy epochs[kCycleEpochSlots];
  const std::uint32_t n = load_cycle_epochs(h, epochs);
  EXPECT_EQ(n, kCycleEpochSlots);
  const timers::pico_converter base{h.timers[kCycle].base, h.timers[kCycle].mult, h.timers[kCycle].shift};
  std::uint64_t last = 0;
  for (std::uint64_t r = epochs[0].raw_start; r < raw + static_cast<std::uint64_t>(kF0);
       r += static_cast<std::uint64_t>(kF0 / 7)) {
    const std::uint64_t ps = cycle_to_pico(h, base, r);
    EXPECT_GE(ps, last) << "raw " << r;
    last = ps;
  }
}

TEST_F(CycleEpochsTest, ADamagedEpochTableIsIgnoredNotFollowed) {
  auto& h = map_.header();
  wait_at(0, kBase + 3000, kBase + 6000);
  h.cycle_epoch_count = std::numeric_limits<std::uint64_t>::max();  // garbage
  for (std::uint32_t i = 0; i < kCycleEpochSlots; ++i)
    h.cycle_epochs[i] = {0xdeadbeefull * i, 77, 88, ~0ull, 1e300};
  epoch_copy epochs[kCycleEpochSlots];
  EXPECT_EQ(load_cycle_epochs(h, epochs), 0u);  // no slot carries the number it should
  // Slots that do carry their numbers but go back in raw order are dropped.
  h.cycle_epoch_count = 3;
  h.cycle_epochs[0] = {1, 5000, 0, 1, 1e9};
  h.cycle_epochs[1] = {2, 4000, 0, 1, 1e9};
  h.cycle_epochs[2] = {3, 9000, 0, ~0ull, 1e9};
  EXPECT_EQ(load_cycle_epochs(h, epochs), 2u);
  const std::vector<row> rows = scan(table_id::events_waits_history_long);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_GE(rows[0][7].i, 0);  // whatever the garbage says: a bigint, no crash
}

// ---------------------------------------------------------------------------
// The agent's watch thread in a live process

TEST(CycleWatchThread, ChecksTheRateWhileTheProgramRuns) {
  if (!timers::info(timers::timer_kind::cycle).available) GTEST_SKIP() << "no CYCLE timer here";
  pfs::test::in_child([] {
    options o = pfs::test::small_options("cyclewatch");
    o.cycle_watch = 1;  // on whatever the clock source
    o.cycle_watch_interval_ms = 60;
    ASSERT_TRUE(init(o)) << last_error();
    pfs::mutex m{"test", "watched"};
    for (int i = 0; i < 40; ++i) {  // ~0.6 s of waits, ten checks or so
      m.lock();
      usleep(15000);
      m.unlock();
    }
    std::map<std::string, std::int64_t> status;
    for (const auto& r : pfs::test::scan("status"))
      status[pfs::test::S(r, "variable_name")] = pfs::test::I(r, "variable_value");
    EXPECT_EQ(status["cycle_rate_watch"], 1);
    EXPECT_GE(status["cycle_rate_checks"], 3);
    // A real TSC against CLOCK_MONOTONIC_RAW: far from a 10% jump.
    EXPECT_LT(status["cycle_max_drift_ppb"], 100'000'000);
    std::int64_t last = -1;
    for (const auto& r : pfs::test::scan("events_waits_history_long")) {
      if (pfs::test::S(r, "event_name") != "wait/synch/mutex/test/watched") continue;
      EXPECT_GE(pfs::test::I(r, "timer_wait"), 0);
      EXPECT_LT(pfs::test::I(r, "timer_wait"), 5'000'000'000'000);  // under 5 s
      EXPECT_GT(pfs::test::I(r, "timer_start"), last);
      last = pfs::test::I(r, "timer_start");
    }
    EXPECT_GT(last, 0);
  });
}

// A child forked with %p in PFS_REGION records into a region of its own, and checks
// the rate there with a watch of its own (the parent's thread did not come along).
TEST(CycleWatchThread, AForkedChildWatchesItsOwnRegion) {
  if (!timers::info(timers::timer_kind::cycle).available) GTEST_SKIP() << "no CYCLE timer here";
  pfs::test::in_child([] {
    options o = pfs::test::small_options("cyclewatchfork");
    o.region_path = testing::TempDir() + "pfs_cyclewatch.%p.pfs";
    o.cycle_watch = 1;
    o.cycle_watch_interval_ms = 20;
    ASSERT_TRUE(init(o)) << last_error();
    const std::string parent_region = current_region()->path();
    fflush(nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      usleep(400000);  // several checks of 50 ms or more
      std::map<std::string, std::int64_t> status;
      for (const auto& r : pfs::test::scan("status"))
        status[pfs::test::S(r, "variable_name")] = pfs::test::I(r, "variable_value");
      int failures = 0;
      failures += current_region()->path() == parent_region;
      failures += status["pid"] != getpid();
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
      failures += status["cycle_rate_watch"] != 0;  // no thread from a child handler there
#else
      failures += status["cycle_rate_watch"] != 1;
      failures += status["cycle_rate_checks"] < 2;
#endif
      if (failures != 0)
        std::fprintf(stderr, "child: region %s watch %lld checks %lld\n", current_region()->path().c_str(),
                     static_cast<long long>(status["cycle_rate_watch"]),
                     static_cast<long long>(status["cycle_rate_checks"]));
      pfs::shutdown();
      unlink(current_region()->path().c_str());
      _exit(failures == 0 ? 0 : 1);
    }
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "the forked child's watch did not check";
    unlink(parent_region.c_str());
  });
}

TEST(CycleWatchThread, OffMeansNoThreadAndNoChecks) {
  pfs::test::in_child([] {
    options o = pfs::test::small_options("cyclewatchoff");
    o.cycle_watch = 0;
    ASSERT_TRUE(init(o)) << last_error();
    usleep(50000);
    for (const auto& r : pfs::test::scan("status")) {
      const std::string n = pfs::test::S(r, "variable_name");
      if (n == "cycle_rate_watch" || n == "cycle_rate_checks" || n == "cycle_recalibrations") {
        EXPECT_EQ(pfs::test::I(r, "variable_value"), 0) << n;
      }
    }
  });
}

TEST(CycleWatchThread, EnvironmentChoosesTheWatch) {
  setenv("PFS_TIMER_WATCH", "on", 1);
  setenv("PFS_TIMER_WATCH_INTERVAL_MS", "250", 1);
  std::string error;
  options o = options::from_environment(&error);
  EXPECT_EQ(o.cycle_watch, 1);
  EXPECT_EQ(o.cycle_watch_interval_ms, 250u);
  EXPECT_TRUE(error.empty()) << error;
  setenv("PFS_TIMER_WATCH", "sometimes", 1);
  setenv("PFS_TIMER_WATCH_INTERVAL_MS", "5", 1);
  o = options::from_environment(&error);
  EXPECT_EQ(o.cycle_watch, -1);
  EXPECT_EQ(o.cycle_watch_interval_ms, 2000u);
  EXPECT_NE(error.find("PFS_TIMER_WATCH=sometimes"), std::string::npos) << error;
  EXPECT_NE(error.find("PFS_TIMER_WATCH_INTERVAL_MS=5"), std::string::npos) << error;
  unsetenv("PFS_TIMER_WATCH");
  unsetenv("PFS_TIMER_WATCH_INTERVAL_MS");
}

}  // namespace

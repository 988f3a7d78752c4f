// The program's own metrics end to end: meters and metrics declared through the C
// ABI and the C++ API, updated from two real threads (one of which ends, its cells
// folded into the records), read back exactly from setup_meters and setup_metrics;
// declarations beyond PFS_MAX_METERS / PFS_MAX_METRICS counted as lost; an observed
// gauge called at its meter's FREQUENCY, not while the meter is disabled, and never
// after it is destroyed.
#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs_meter.h"
#include "agent/provider/pfs_service.h"
#include "agent/reader/reader.h"
#include "agent/region/setup.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

using namespace pfs;
using pfs::test::I;
using pfs::test::in_child;
using pfs::test::named_row;
using pfs::test::S;
using pfs::test::scan;
using pfs::test::small_options;
using pfs::test::status_value;

options meter_options(const char* tag, std::uint32_t max_meters = 8, std::uint32_t max_metrics = 16) {
  options o = small_options(tag);
  o.sizes.max_meters = max_meters;
  o.sizes.max_metrics = max_metrics;
  return o;
}

named_row metric_row(const char* name) {
  for (const auto& r : scan("setup_metrics"))
    if (S(r, "name") == name) return r;
  ADD_FAILURE() << "no setup_metrics row " << name;
  return {};
}

double value_of(const char* name) {
  const named_row r = metric_row(name);
  return r.empty() || r.at("value").null ? -1e300 : r.at("value").d;
}

constinit pfs::meter shop{"shop", "the shop's numbers", 5};
constinit pfs::counter<std::int64_t> orders{shop, "orders", "{order}", "orders taken"};
constinit pfs::counter<double> revenue{shop, "revenue", "EUR", "money taken"};
constinit pfs::updown_counter<std::int64_t> open_carts{shop, "open_carts", "{cart}", "carts not checked out"};
constinit pfs::gauge<std::int64_t> stock{shop, "stock", "{item}", "items in stock"};
constinit pfs::gauge<double> load{shop, "load", "1", "share of the workers busy"};

TEST(Meters, UpdatesFromTwoThreadsAreExact) {
  in_child([] {
    ASSERT_TRUE(init(meter_options("meters_exact")));
    constexpr int kN = 100000;
    auto work = [] {
      for (int i = 0; i < kN; ++i) {
        orders.add(1);
        revenue.add(0.5);
        open_carts.add(i % 2 == 0 ? 3 : -1);
      }
      orders.add(-5);  // a counter only grows: ignored
    };
    std::thread ended(work);  // its cells are folded into the records when it ends
    ended.join();
    std::thread live(work);
    work();  // the main thread's cells, live at the scan
    live.join();
    stock.set(42);
    stock.set(17);  // the last value wins
    load.set(0.25);
    EXPECT_EQ(value_of("orders"), 3.0 * kN);
    EXPECT_EQ(value_of("revenue"), 3 * 0.5 * kN);
    EXPECT_EQ(value_of("open_carts"), 3.0 * (kN / 2) * 2);  // per thread: kN/2 * (3 - 1)
    EXPECT_EQ(value_of("stock"), 17.0);
    EXPECT_EQ(value_of("load"), 0.25);

    const named_row o = metric_row("orders");
    EXPECT_EQ(S(o, "meter"), "shop");
    EXPECT_EQ(S(o, "metric_type"), "COUNTER");
    EXPECT_EQ(S(o, "num_type"), "INTEGER");
    EXPECT_EQ(S(o, "unit"), "{order}");
    EXPECT_EQ(S(o, "description"), "orders taken");
    EXPECT_EQ(S(metric_row("revenue"), "num_type"), "DOUBLE");
    EXPECT_EQ(S(metric_row("open_carts"), "metric_type"), "UPDOWN COUNTER");
    EXPECT_EQ(S(metric_row("stock"), "metric_type"), "GAUGE COUNTER");

    const auto meters = scan("setup_meters");
    ASSERT_EQ(meters.size(), 1u);
    EXPECT_EQ(S(meters[0], "name"), "shop");
    EXPECT_EQ(I(meters[0], "frequency"), 5);
    EXPECT_EQ(S(meters[0], "enabled"), "YES");
    EXPECT_EQ(S(meters[0], "description"), "the shop's numbers");
  });
}

TEST(Meters, CAbiKindsAndWrongCalls) {
  in_child([] {
    ASSERT_TRUE(init(meter_options("meters_c")));
    const pfs_meter m = pfs_register_meter("c.meter", nullptr, 0);
    ASSERT_NE(m, 0u);
    EXPECT_EQ(pfs_register_meter("c.meter", "again", 3), m);  // the same meter
    const pfs_metric c =
        pfs_register_metric(m, "c", PFS_METRIC_COUNTER, PFS_METRIC_INTEGER, nullptr, nullptr);
    const pfs_metric g = pfs_register_metric(m, "g", PFS_METRIC_GAUGE, PFS_METRIC_DOUBLE, "s", "");
    ASSERT_NE(c, 0u);
    ASSERT_NE(g, 0u);
    EXPECT_EQ(pfs_register_metric(m, "c", PFS_METRIC_COUNTER, PFS_METRIC_INTEGER, nullptr, nullptr), c);
    EXPECT_EQ(pfs_register_metric(m, "bad", 9, PFS_METRIC_INTEGER, nullptr, nullptr), 0u);
    EXPECT_EQ(pfs_register_metric(99, "x", PFS_METRIC_COUNTER, PFS_METRIC_INTEGER, nullptr, nullptr), 0u);
    pfs_metric_add(c, 7);
    pfs_metric_set(c, 100);         // a counter is not set: ignored
    pfs_metric_add_double(c, 1.5);  // an integer metric: ignored
    pfs_metric_set_double(g, 2.5);
    pfs_metric_set(g, 9);  // a double metric: ignored
    pfs_metric_add(0, 1);  // no metric: nothing
    EXPECT_EQ(value_of("c"), 7.0);
    EXPECT_EQ(value_of("g"), 2.5);
    const auto meters = scan("setup_meters");
    ASSERT_EQ(meters.size(), 1u);
    EXPECT_EQ(I(meters[0], "frequency"), 10);  // 0: MySQL's default
    EXPECT_EQ(S(meters[0], "description"), "");

    // The service table of version 6 reaches the same functions.
    const auto* v6 = static_cast<const pfs_service_v6*>(pfs_get_interface(PFS_SERVICE_VERSION_6));
    ASSERT_NE(v6, nullptr);
    EXPECT_EQ(v6->base.base.base.base.base.version, static_cast<std::uint32_t>(PFS_SERVICE_VERSION_6));
    EXPECT_EQ(v6->base.base.base.base.base.size, sizeof(pfs_service_v6));
    v6->metric_add(c, 3);
    EXPECT_EQ(value_of("c"), 10.0);
  });
}

TEST(Meters, DeclarationsBeyondTheArraysAreLost) {
  in_child([] {
    ASSERT_TRUE(init(meter_options("meters_lost", 2, 3)));
    const pfs_meter a = pfs_register_meter("a", nullptr, 0);
    const pfs_meter b = pfs_register_meter("b", nullptr, 0);
    EXPECT_NE(a, 0u);
    EXPECT_NE(b, 0u);
    EXPECT_EQ(pfs_register_meter("c", nullptr, 0), 0u);
    for (const char* n : {"m1", "m2", "m3", "m4", "m5"})
      pfs_register_metric(a, n, PFS_METRIC_COUNTER, PFS_METRIC_INTEGER, nullptr, nullptr);
    EXPECT_EQ(scan("setup_meters").size(), 2u);
    EXPECT_EQ(scan("setup_metrics").size(), 3u);
    EXPECT_EQ(status_value("meters_lost"), 1);
    EXPECT_EQ(status_value("metrics_lost"), 2);
  });
}

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Waits (up to 20 s) until pred holds.
template <class F>
bool eventually(F pred) {
  for (int i = 0; i < 2000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

TEST(Meters, ObservedGaugeIsCalledAtItsFrequencyAndNotWhileDisabled) {
  in_child([] {
    ASSERT_TRUE(init(meter_options("meters_observed")));
    static constinit pfs::meter pool{"pool", "the worker pool", 1};
    std::atomic<int> calls{0};
    std::atomic<std::uint64_t> first{0}, second{0};
    std::atomic<bool> on_program_thread{false};
    const auto main_id = std::this_thread::get_id();
    {
      pfs::observed_gauge<std::int64_t> busy{pool, "busy", "{worker}", "workers busy", [&] {
                                               const int n = ++calls;
                                               if (n == 1) first = now_ns();
                                               if (n == 2) second = now_ns();
                                               if (std::this_thread::get_id() == main_id)
                                                 on_program_thread = true;
                                               return std::int64_t{1000} + n;
                                             }};
      ASSERT_NE(busy.id(), 0u);
      EXPECT_EQ(S(metric_row("busy"), "metric_type"), "ASYNC GAUGE COUNTER");
      ASSERT_TRUE(eventually([&] { return calls.load() >= 2; }));
      // FREQUENCY 1: a second apart (the meter thread ticks every 0.1 s).
      EXPECT_GE(second.load() - first.load(), 990000000u);
      EXPECT_LT(second.load() - first.load(), 5000000000u);
      EXPECT_FALSE(on_program_thread.load());
      const double v = value_of("busy");
      EXPECT_GE(v, 1002.0);

      // Disabled: no call (one that had started may end first).
      {
        const region_map& r = *current_region();
        setup_lock_guard lock(r);
        ASSERT_TRUE(setup::set_meter(r, setup::find_meter(r, "pool"), 0, -1));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      const int when_disabled = calls.load();
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      EXPECT_EQ(calls.load(), when_disabled);
      EXPECT_EQ(S(scan("setup_meters")[0], "enabled"), "NO");

      // Enabled again: calls resume.
      {
        const region_map& r = *current_region();
        setup_lock_guard lock(r);
        ASSERT_TRUE(setup::set_meter(r, setup::find_meter(r, "pool"), 1, -1));
        EXPECT_FALSE(setup::set_meter(r, setup::find_meter(r, "pool"), -1, 0));  // below 1 s
        EXPECT_FALSE(setup::set_meter(r, setup::find_meter(r, "none"), 1, -1));
      }
      ASSERT_TRUE(eventually([&] { return calls.load() > when_disabled; }));
      EXPECT_GE(value_of("busy"), 1000.0 + when_disabled + 1);
    }
    // Destroyed: never called again.
    const int at_destruction = calls.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(calls.load(), at_destruction);
  });
}

}  // namespace

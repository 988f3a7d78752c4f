// Agent core: naming, rules, flags, events, rings, summaries, nesting, lost counters.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <set>
#include <string>
#include <thread>

#include "agent/region/setup.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

using namespace pfs;
using namespace pfs::layout;
using pfs::test::in_child;
using pfs::test::small_options;

TEST(InstrumentRules, LikeMatching) {
  EXPECT_TRUE(like_match("wait/synch/mutex/%", "wait/synch/mutex/app/a"));
  EXPECT_TRUE(like_match("%", ""));
  EXPECT_TRUE(like_match("wait/%/app/_", "wait/synch/mutex/app/b"));
  EXPECT_FALSE(like_match("wait/%/app/_", "wait/synch/mutex/app/bc"));
  EXPECT_FALSE(like_match("wait/synch/cond/%", "wait/synch/mutex/app/a"));
  EXPECT_TRUE(like_match("wait/synch/mutex/app/a", "wait/synch/mutex/app/a"));
  EXPECT_FALSE(like_match("wait/synch/mutex/app/a", "wait/synch/mutex/app/ab"));
}

TEST(InstrumentRules, LongestPatternWins) {
  std::vector<instrument_rule> rules;
  std::string error;
  ASSERT_TRUE(
      parse_instrument_rules("wait/synch/mutex/%=ON, wait/synch/cond/%=COUNTED,%=OFF,"
                             "wait/synch/mutex/app/noisy=OFF",
                             rules, error))
      << error;
  const instrument_rule* r = match_rule(rules, "wait/synch/mutex/app/a");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->enabled && r->timed);
  r = match_rule(rules, "wait/synch/cond/app/c");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->enabled);
  EXPECT_FALSE(r->timed);
  r = match_rule(rules, "wait/synch/mutex/app/noisy");
  EXPECT_FALSE(r->enabled);
  r = match_rule(rules, "wait/synch/rwlock/app/r");
  EXPECT_FALSE(r->enabled);
  EXPECT_EQ(match_rule({}, "x"), nullptr);
}

TEST(InstrumentRules, BadRulesAreRejected) {
  std::vector<instrument_rule> rules;
  std::string error;
  EXPECT_FALSE(parse_instrument_rules("wait/%=MAYBE", rules, error));
  EXPECT_NE(error.find("MAYBE"), std::string::npos);
  EXPECT_FALSE(parse_instrument_rules("justapattern", rules, error));
  EXPECT_FALSE(parse_instrument_rules("=ON", rules, error));
}

TEST(Agent, NamesAreValidatedAndRegistrationIsIdempotent) {
  in_child([] {
    ASSERT_TRUE(init(small_options("names"))) << last_error();
    const region_map& r = *current_region();
    pfs_key a = pfs_register_mutex("app", "LOCK_open");
    EXPECT_NE(a, 0u);
    EXPECT_EQ(pfs_register_mutex("app", "LOCK_open"), a);
    EXPECT_NE(pfs_register_rwlock("app", "LOCK_open"), a);  // another kind, another class
    EXPECT_NE(pfs_register_mutex("app", "THR_LOCK::mutex"), 0u);
    EXPECT_NE(pfs::test::find_class(r, "wait/synch/mutex/app/LOCK_open"), nullptr);
    EXPECT_NE(pfs::test::find_class(r, "wait/synch/rwlock/app/LOCK_open"), nullptr);
    EXPECT_NE(pfs_register_cond("app", "COND_x"), 0u);
    EXPECT_NE(pfs::test::find_class(r, "wait/synch/cond/app/COND_x"), nullptr);
    // Invalid names are refused (key 0 = not instrumented), nothing is registered.
    EXPECT_EQ(pfs_register_mutex("", "x"), 0u);
    EXPECT_EQ(pfs_register_mutex("app", ""), 0u);
    EXPECT_EQ(pfs_register_mutex("a/b", "x"), 0u);
    EXPECT_EQ(pfs_register_mutex("app", "x/y"), 0u);
    EXPECT_EQ(pfs_register_mutex("app", "50%"), 0u);
    EXPECT_EQ(pfs_register_mutex("app", "with space"), 0u);
    EXPECT_EQ(pfs_register_mutex(nullptr, "x"), 0u);
    EXPECT_EQ(pfs_register_mutex("app", std::string(200, 'n').c_str()), 0u);
    // An object of an invalid class works, uninstrumented.
    pfs::mutex m{"bad/category", "x"};
    m.lock();
    m.unlock();
  });
}

TEST(Agent, StartupRulesSetFlags) {
  in_child([] {
    options o = small_options("rules");
    o.instrument = "wait/synch/mutex/%=ON,wait/synch/mutex/app/counted=COUNTED,wait/synch/cond/%=OFF";
    ASSERT_TRUE(init(o)) << last_error();
    const region_map& r = *current_region();
    pfs_register_mutex("app", "timed");
    pfs_register_mutex("app", "counted");
    pfs_register_cond("app", "c");
    pfs_register_rwlock("app", "rw");  // no rule matches: off, as MySQL 8.0 ships it
    EXPECT_EQ(pfs::test::find_class(r, "wait/synch/mutex/app/timed")->flags, kFlagEnabled | kFlagTimed);
    EXPECT_EQ(pfs::test::find_class(r, "wait/synch/mutex/app/counted")->flags, kFlagEnabled);
    EXPECT_EQ(pfs::test::find_class(r, "wait/synch/cond/app/c")->flags, 0);
    EXPECT_EQ(pfs::test::find_class(r, "wait/synch/rwlock/app/rw")->flags, 0);
  });
}

TEST(Agent, BadStartupOptionsLeaveTheAgentDisabled) {
  in_child([] {
    options o = small_options("badopts");
    o.instrument = "%=SOMETIMES";
    EXPECT_FALSE(init(o));
    EXPECT_NE(last_error().find("SOMETIMES"), std::string::npos);
    EXPECT_FALSE(active());
    o.instrument = "%=ON";
    o.consumers = "events_waits_nothing=ON";
    EXPECT_FALSE(init(o));
    o.consumers = "";
    o.wait_timer = "SUNDIAL";
    EXPECT_FALSE(init(o));
    EXPECT_NE(last_error().find("unknown wait timer \"SUNDIAL\""), std::string::npos) << last_error();
    o.wait_timer = "NANOSECOND";
    o.consumers = "events_waits_history_long=OFF";
    EXPECT_TRUE(init(o)) << last_error();
    EXPECT_EQ(current_region()->header().wait_timer, 2);
    EXPECT_EQ(current_region()->header().consumers[kConsumerWaitsHistoryLong], 0);
  });
}

TEST(Agent, MutexWaitIsRecordedEverywhere) {
  in_child([] {
    ASSERT_TRUE(init(small_options("mutex"))) << last_error();
    const region_map& r = *current_region();
    pfs::mutex m{"app", "m"};
    { pfs::lock_guard g(m); }
    const unsigned line = __LINE__ - 1;
    const std::uint64_t tid = thread_id();
    ASSERT_NE(tid, 0u);
    const std::uint32_t key = pfs::test::class_index(r, "wait/synch/mutex/app/m");
    // events_waits_current: the completed wait stays visible.
    const wait_record* stack = pfs::test::stack_of(r, tid);
    ASSERT_NE(stack, nullptr);
    EXPECT_EQ(stack[0].state, kWaitCompleted);
    EXPECT_EQ(stack[0].class_index, key);
    EXPECT_EQ(stack[0].operation, kOpLock);
    EXPECT_EQ(stack[0].thread_id, tid);
    EXPECT_EQ(stack[0].event_id, 1u);
    EXPECT_EQ(stack[0].end_event_id, 2u);  // MySQL: the thread's next event id at the end
    EXPECT_EQ(stack[0].nesting_event_id, 0u);
    EXPECT_EQ(stack[0].object_instance_begin, reinterpret_cast<std::uintptr_t>(&m));
    EXPECT_NE(stack[0].timer, 0);
    EXPECT_GE(stack[0].timer_end, stack[0].timer_start);
    EXPECT_EQ(stack[0].number_of_bytes, -1);
    ASSERT_NE(stack[0].source_index, 0u);
    const auto* src = r.array<source_record>(kArraySources) + stack[0].source_index - 1;
    EXPECT_EQ(std::string(src->text), "test_agent.cpp:" + std::to_string(line));
    EXPECT_EQ(stack[1].state, kWaitEmpty);
    // history and history_long
    auto h = pfs::test::history_of(r, tid);
    ASSERT_EQ(h.size(), 1u);
    EXPECT_EQ(h[0].event_id, 1u);
    auto hl = pfs::test::history_long(r);
    ASSERT_EQ(hl.size(), 1u);
    EXPECT_EQ(hl[0].event_id, 1u);
    // by instance, by thread
    const sync_instance* inst = pfs::test::find_instance(r, kArrayMutexes, &m);
    ASSERT_NE(inst, nullptr);
    EXPECT_EQ(inst->stat.count, 1u);
    const std::uint64_t ps = r.header().timers[stack[0].timer].mult == 0
                                 ? 0
                                 : timers::pico_converter{r.header().timers[stack[0].timer].base,
                                                          r.header().timers[stack[0].timer].mult,
                                                          r.header().timers[stack[0].timer].shift}
                                       .delta_to_pico(stack[0].timer_end - stack[0].timer_start);
    EXPECT_EQ(inst->stat.sum, ps);
    EXPECT_EQ(inst->stat.min, ps);
    EXPECT_EQ(inst->stat.max, ps);
    std::uint32_t slot = 0;
    pfs::test::find_thread(r, tid, &slot);
    const wait_stat& ts = r.array<wait_stat>(kArrayThreadClassStats)[slot * r.header().max_classes + key - 1];
    EXPECT_EQ(ts.count, 1u);
    EXPECT_EQ(ts.sum, ps);
    EXPECT_EQ(inst->owner_thread_id, 0u);  // unlocked
    m.lock();
    EXPECT_EQ(inst->owner_thread_id, tid);
    EXPECT_TRUE(!m.try_lock());  // a failed try_lock is a wait too
    m.unlock();
    EXPECT_EQ(inst->owner_thread_id, 0u);
    EXPECT_EQ(inst->stat.count, 3u);
    EXPECT_EQ(stack[0].operation, kOpTryLock);
  });
}

// Readers walk the thread slots below the header's high-water mark of claimed
// slots only: three threads registered one after the other, the second gone
// before the third came (which took its slot), make it 2, and the threads table
// still shows every live thread.
TEST(Agent, ThreadSlotsUsedIsAHighWaterMark) {
  in_child([] {
    options o = small_options("slots_used");
    o.cycle_watch = 0;  // no agent thread of its own
    ASSERT_TRUE(init(o)) << last_error();
    region_map& r = const_cast<region_map&>(*current_region());
    // None claimed yet: the agent says so, and readers walk no slot (not all of
    // them, as in a region without the mark).
    EXPECT_EQ(load_relaxed(r.header().thread_slots_used), kThreadSlotsKnown);
    EXPECT_TRUE(pfs::test::scan("threads").empty());
    register_thread("test", "main");
    EXPECT_EQ(load_relaxed(r.header().thread_slots_used), kThreadSlotsKnown | 1u);
    auto shown = [] { return pfs::test::scan("threads").size(); };
    EXPECT_EQ(shown(), 1u);
    store_relaxed(r.header().thread_slots_used, kThreadSlotsKnown);  // as if main had no slot yet
    EXPECT_EQ(shown(), 0u);
    store_relaxed(r.header().thread_slots_used, 0u);  // no mark (an older agent): every slot
    EXPECT_EQ(shown(), 1u);
    store_relaxed(r.header().thread_slots_used, kThreadSlotsKnown | 1u);
    std::thread([] {
      register_thread("test", "gone");
      unregister_thread();
    }).join();
    std::atomic<bool> stop{false}, registered{false};
    std::thread worker([&] {
      register_thread("test", "worker");
      registered = true;
      while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      unregister_thread();
    });
    while (!registered) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // The gone thread's slot 1 was free again: the worker took it.
    EXPECT_EQ(load_relaxed(r.header().thread_slots_used), kThreadSlotsKnown | 2u);
    std::set<std::string> names;
    for (const auto& row : pfs::test::scan("threads")) names.insert(pfs::test::S(row, "name"));
    EXPECT_EQ(names.count("thread/test/main"), 1u);
    EXPECT_EQ(names.count("thread/test/worker"), 1u);
    EXPECT_EQ(names.count("thread/test/gone"), 0u);
    stop = true;
    worker.join();
  });
}

// Readers look at the class records below the header's count of records ever
// allocated: a class registered again keeps it, a new one raises it, and a reader
// shown a lower count leaves the records above it out.
TEST(Agent, ClassesUsedCountsTheAllocatedRecords) {
  in_child([] {
    options o = small_options("classes_used");
    o.cycle_watch = 0;
    ASSERT_TRUE(init(o)) << last_error();
    region_map& r = const_cast<region_map&>(*current_region());
    auto allocated = [&r] {
      std::uint32_t n = 0;
      for (std::uint32_t i = 0; i < r.header().max_classes; ++i)
        n += (load_acquire(r.array<class_record>(kArrayClasses)[i].lock) & kStateMask) == kStateAllocated;
      return n;
    };
    const pfs_key a = pfs_register_mutex("app", "first");
    ASSERT_NE(a, 0u);
    EXPECT_EQ(load_relaxed(r.header().classes_used), a);
    EXPECT_EQ(load_relaxed(r.header().classes_used), allocated());
    EXPECT_EQ(pfs_register_mutex("app", "first"), a);
    EXPECT_EQ(load_relaxed(r.header().classes_used), a);
    const pfs_key b = pfs_register_mutex("app", "second");
    EXPECT_EQ(b, a + 1);
    EXPECT_EQ(load_relaxed(r.header().classes_used), b);
    auto named = [] {
      std::set<std::string> names;
      for (const auto& row : pfs::test::scan("setup_instruments")) names.insert(pfs::test::S(row, "name"));
      return names;
    };
    EXPECT_EQ(named().count("wait/synch/mutex/app/second"), 1u);
    store_relaxed(r.header().classes_used, a);  // as if "second" were not allocated yet
    EXPECT_EQ(named().count("wait/synch/mutex/app/first"), 1u);
    EXPECT_EQ(named().count("wait/synch/mutex/app/second"), 0u);
    store_relaxed(r.header().classes_used, 0u);  // an older agent's region: every record
    EXPECT_EQ(named().count("wait/synch/mutex/app/second"), 1u);
    store_relaxed(r.header().classes_used, b);
  });
}

TEST(Agent, DisabledCountedAndTimed) {
  in_child([] {
    options o = small_options("flags");
    o.instrument = "wait/synch/mutex/app/on=ON,wait/synch/mutex/app/counted=COUNTED";
    ASSERT_TRUE(init(o)) << last_error();
    const region_map& r = *current_region();
    pfs::mutex off{"app", "off"}, counted{"app", "counted"}, on{"app", "on"};
    for (int i = 0; i < 5; ++i) {
      pfs::lock_guard a(off);
      pfs::lock_guard b(counted);
      pfs::lock_guard c(on);
    }
    EXPECT_EQ(pfs::test::find_instance(r, kArrayMutexes, &off)->stat.count, 0u);
    const sync_instance* ci = pfs::test::find_instance(r, kArrayMutexes, &counted);
    EXPECT_EQ(ci->stat.count, 5u);
    EXPECT_EQ(ci->stat.sum, 0u);
    EXPECT_EQ(ci->stat.min, UINT64_MAX);
    EXPECT_EQ(pfs::test::find_instance(r, kArrayMutexes, &on)->stat.count, 5u);
    for (const auto& e : pfs::test::history_of(r, thread_id())) {
      if (e.class_index == pfs::test::class_index(r, "wait/synch/mutex/app/counted")) {
        EXPECT_EQ(e.timer, 0);  // NULL times
      } else {
        EXPECT_NE(e.timer, 0);
      }
    }
    // Changing a class at run time applies to existing objects (MySQL Bug#79784).
    EXPECT_TRUE(set_instrument("wait/synch/mutex/app/off", true, true));
    { pfs::lock_guard a(off); }
    EXPECT_EQ(pfs::test::find_instance(r, kArrayMutexes, &off)->stat.count, 1u);
    EXPECT_TRUE(set_consumer("global_instrumentation", false));
    { pfs::lock_guard a(off); }
    EXPECT_EQ(pfs::test::find_instance(r, kArrayMutexes, &off)->stat.count, 1u);
  });
}

TEST(Agent, HistoryRingWrapsAndKeepsTheLatest) {
  in_child([] {
    ASSERT_TRUE(init(small_options("ring"))) << last_error();
    const region_map& r = *current_region();
    pfs::mutex m{"app", "m"};
    for (int i = 0; i < 11; ++i) pfs::lock_guard g(m);
    auto h = pfs::test::history_of(r, thread_id());
    ASSERT_EQ(h.size(), 4u);  // history_per_thread
    for (std::size_t i = 0; i < h.size(); ++i) EXPECT_EQ(h[i].event_id, 8 + i);
    EXPECT_EQ(pfs::test::history_long(r).size(), 11u);
    for (int i = 0; i < 100; ++i) pfs::lock_guard g(m);
    auto hl = pfs::test::history_long(r);
    EXPECT_EQ(hl.size(), 64u);  // history_long_size: full, the latest events
    std::uint64_t min_id = UINT64_MAX;
    for (const auto& e : hl) min_id = std::min(min_id, e.event_id);
    EXPECT_EQ(min_id, 111u - 64u + 1u);
  });
}

TEST(Agent, SummaryMathMatchesTheEvents) {
  in_child([] {
    options o = small_options("summary");
    o.sizes.history_long_size = 1000;
    ASSERT_TRUE(init(o)) << last_error();
    const region_map& r = *current_region();
    pfs::mutex m{"app", "m"};
    for (int i = 0; i < 200; ++i) pfs::lock_guard g(m);
    const auto& t = r.header().timers[r.header().wait_timer];
    const timers::pico_converter conv{t.base, t.mult, t.shift};
    std::uint64_t sum = 0, mn = UINT64_MAX, mx = 0;
    auto hl = pfs::test::history_long(r);
    ASSERT_EQ(hl.size(), 200u);
    for (const auto& e : hl) {
      std::uint64_t ps = e.timer_end > e.timer_start ? conv.delta_to_pico(e.timer_end - e.timer_start) : 0;
      sum += ps;
      mn = std::min(mn, ps);
      mx = std::max(mx, ps);
    }
    const sync_instance* inst = pfs::test::find_instance(r, kArrayMutexes, &m);
    EXPECT_EQ(inst->stat.count, 200u);
    EXPECT_EQ(inst->stat.sum, sum);
    EXPECT_EQ(inst->stat.min, mn);
    EXPECT_EQ(inst->stat.max, mx);
    // The global summary keeps its own statistics, the thread's: the same math,
    // and an instance destroyed since is still counted there (nothing to fold).
    const std::uint32_t key = pfs::test::class_index(r, "wait/synch/mutex/app/m");
    {
      pfs::mutex gone{pfs_register_mutex("app", "m")};
      pfs::lock_guard g(gone);
    }
    const wait_stat* g = pfs::test::global_stat_of(r, pfs::thread_id(), key);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->count, 201u);
    EXPECT_GE(g->sum, sum);
    EXPECT_LE(g->min, mn);
    EXPECT_GE(g->max, mx);
    // The class's bucket holds what exited threads counted: none yet.
    const class_record& c = r.array<class_record>(kArrayClasses)[key - 1];
    EXPECT_EQ(c.stat.count, 0u);
  });
}

// Seed 000 times a wait from "about to acquire" to "finished acquiring": a lock
// taken at the first try and a try-lock (taken or not) get two timer reads, in
// the C++ API as in the C ABI, so MIN_TIMER_WAIT is the cost of acquiring.
TEST(Agent, EveryAcquisitionIsTimed) {
  in_child([] {
    options o = small_options("timed");
    o.sizes.history_long_size = 1000;
    ASSERT_TRUE(init(o)) << last_error();
    const region_map& r = *current_region();
    pfs::mutex m{"app", "m"};
    pfs::shared_mutex rw{"app", "rw"};
    for (int i = 0; i < 50; ++i) pfs::lock_guard g(m);
    for (int i = 0; i < 50; ++i) {
      rw.lock_shared();
      rw.unlock_shared();
      rw.lock();
      rw.unlock();
    }
    ASSERT_TRUE(m.try_lock());
    EXPECT_FALSE(rw.try_lock() && (rw.unlock(), false));       // taken: a try-lock that succeeds
    std::thread([&m] { EXPECT_FALSE(m.try_lock()); }).join();  // busy: a try-lock that fails
    m.unlock();
    std::size_t n = 0;
    for (const auto& e : pfs::test::history_long(r)) {
      ++n;
      EXPECT_GT(e.timer_end, e.timer_start) << "operation " << int{e.operation};
    }
    EXPECT_EQ(n, 50u + 100u + 3u);
    for (const auto* name : {"wait/synch/mutex/app/m", "wait/synch/rwlock/app/rw"}) {
      const std::uint32_t key = pfs::test::class_index(r, name);
      const wait_stat* g = pfs::test::global_stat_of(r, pfs::thread_id(), key);
      ASSERT_NE(g, nullptr) << name;
      EXPECT_GT(g->min, 0u) << name;
      EXPECT_NE(g->min, UINT64_MAX) << name;
      EXPECT_GE(g->sum, g->count * g->min) << name;
    }
  });
}

TEST(Agent, NestedWaitsCarryNestingIds) {
  in_child([] {
    ASSERT_TRUE(init(small_options("nesting"))) << last_error();
    const region_map& r = *current_region();
    pfs_key key = pfs_register_mutex("app", "outer");
    pfs_sync* outer = pfs_init_mutex(key, &key);
    pfs_sync* inner = pfs_init_mutex(pfs_register_mutex("app", "inner"), &r);
    pfs_wait_locker lo, li;
    ASSERT_EQ(pfs_start_mutex_wait(&lo, outer, PFS_OP_LOCK, "outer.c", 10), 1);
    ASSERT_EQ(pfs_start_mutex_wait(&li, inner, PFS_OP_LOCK, "inner.c", 20), 1);
    const wait_record* stack = pfs::test::stack_of(r, thread_id());
    EXPECT_EQ(stack[0].state, kWaitRunning);
    EXPECT_EQ(stack[1].state, kWaitRunning);
    EXPECT_EQ(stack[1].nesting_event_id, stack[0].event_id);
    EXPECT_EQ(stack[1].nesting_type, kNestingWait);
    pfs_end_mutex_wait(&li, 0);
    // Two rows: the running outer wait and the latest (completed) inner one.
    EXPECT_EQ(stack[0].state, kWaitRunning);
    EXPECT_EQ(stack[1].state, kWaitCompleted);
    EXPECT_EQ(stack[0].end_event_id, 0u);
    pfs_end_mutex_wait(&lo, 0);
    EXPECT_EQ(stack[0].state, kWaitCompleted);
    EXPECT_EQ(stack[1].state, kWaitEmpty);
    EXPECT_EQ(stack[0].end_event_id, 3u);  // covers the inner event 2
    pfs_unlock_mutex(inner);
    pfs_unlock_mutex(outer);
    pfs_destroy_sync(inner);
    pfs_destroy_sync(outer);
  });
}

TEST(Agent, FullArraysCountLostAndKeepWorking) {
  in_child([] {
    options o = small_options("full");
    o.sizes.max_classes = 6;  // 'transaction', 'idle' and wait/lock/metadata/sql/mdl take three at start-up
    o.sizes.max_mutexes = 2;
    o.sizes.max_threads = 2;
    o.sizes.wait_stack_depth = 1;
    ASSERT_TRUE(init(o)) << last_error();
    const region_map& r = *current_region();
    // Class array: 6 slots, transaction, idle and mdl, and one taken by the first
    // thread's class on first use.
    pfs_key a = pfs_register_mutex("app", "a");
    pfs_key b = pfs_register_mutex("app", "b");
    EXPECT_NE(a, 0u);
    EXPECT_NE(b, 0u);
    {
      pfs::mutex m1{a}, m2{a}, m3{a};  // third instance lost
      EXPECT_NE(m1.psi(), nullptr);
      EXPECT_NE(m2.psi(), nullptr);
      EXPECT_EQ(m3.psi(), nullptr);
      EXPECT_EQ(pfs::test::lost(r, kLostMutexInstances), 1u);
      m3.lock();  // works, uninstrumented
      m3.unlock();
      { pfs::lock_guard g(m1); }  // registers this thread (thread/pfs/unregistered): classes full now
    }
    EXPECT_EQ(pfs_register_mutex("app", "c"), 0u);
    EXPECT_GE(pfs::test::lost(r, kLostMutexClasses), 1u);
    // Thread array: this thread has one slot, one more thread fits, the third is lost.
    std::thread t1([&] {
      pfs::mutex m{a};
      pfs::lock_guard g(m);
      std::thread t2([&] {
        pfs::mutex m2{a};
        pfs::lock_guard g2(m2);
        EXPECT_EQ(thread_id(), 0u);
      });
      t2.join();
    });
    t1.join();
    EXPECT_EQ(pfs::test::lost(r, kLostThreadInstances), 1u);
    // Wait stack of depth 1: a nested wait is lost (locker_lost), the outer one kept.
    pfs_sync* s1 = pfs_init_mutex(a, &o);
    pfs_sync* s2 = pfs_init_mutex(b, &r);
    pfs_wait_locker l1, l2;
    ASSERT_EQ(pfs_start_mutex_wait(&l1, s1, PFS_OP_LOCK, "x.c", 1), 1);
    ASSERT_EQ(pfs_start_mutex_wait(&l2, s2, PFS_OP_LOCK, "x.c", 2), 1);
    pfs_end_mutex_wait(&l2, 0);
    pfs_end_mutex_wait(&l1, 0);
    EXPECT_EQ(pfs::test::lost(r, kLostLocker), 1u);
  });
}

TEST(Agent, EveryArrayAtSizeZero) {
  in_child([] {
    options o = small_options("zero");
    o.sizes = region_sizes{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    ASSERT_TRUE(init(o)) << last_error();
    const region_map& r = *current_region();
    pfs::mutex m{"app", "m"};
    pfs::shared_mutex rw{"app", "rw"};
    pfs::condition_variable cv{"app", "cv"};
    for (int i = 0; i < 3; ++i) {
      pfs::unique_lock l(m);
      cv.wait_for(l, std::chrono::microseconds(1));
      rw.lock_shared();
      rw.unlock_shared();
    }
    EXPECT_GE(pfs::test::lost(r, kLostMutexClasses), 1u);
    EXPECT_GE(pfs::test::lost(r, kLostRwlockClasses), 1u);
    EXPECT_GE(pfs::test::lost(r, kLostCondClasses), 1u);
    EXPECT_EQ(thread_id(), 0u);
  });
}

TEST(Agent, InstanceArraysAtSizeZeroCountInstancesLost) {
  in_child([] {
    options o = small_options("zeroinst");
    o.sizes.max_mutexes = 0;
    o.sizes.history_per_thread = 0;
    o.sizes.history_long_size = 0;
    o.sizes.max_sources = 0;
    ASSERT_TRUE(init(o)) << last_error();
    const region_map& r = *current_region();
    pfs::mutex m{"app", "m"};
    EXPECT_EQ(m.psi(), nullptr);
    EXPECT_EQ(pfs::test::lost(r, kLostMutexInstances), 1u);
    pfs::shared_mutex rw{"app", "rw"};
    rw.lock();
    rw.unlock();
    const wait_record* stack = pfs::test::stack_of(r, thread_id());
    ASSERT_NE(stack, nullptr);
    EXPECT_EQ(stack[0].state, kWaitCompleted);
    EXPECT_EQ(stack[0].source_index, 0u);  // no source table: SOURCE NULL
    EXPECT_TRUE(pfs::test::history_of(r, thread_id()).empty());
  });
}

TEST(Agent, RwlockAndConditionWaits) {
  in_child([] {
    ASSERT_TRUE(init(small_options("rwcond"))) << last_error();
    const region_map& r = *current_region();
    pfs::shared_mutex rw{"app", "rw"};
    const sync_instance* ri = pfs::test::find_instance(r, kArrayRwlocks, &rw);
    ASSERT_NE(ri, nullptr);
    rw.lock_shared();
    EXPECT_TRUE(rw.try_lock_shared());
    EXPECT_EQ(ri->readers, 2u);
    EXPECT_FALSE(rw.try_lock());
    rw.unlock_shared();
    rw.unlock_shared();
    EXPECT_EQ(ri->readers, 0u);
    rw.lock();
    EXPECT_EQ(ri->owner_thread_id, thread_id());
    rw.unlock();
    EXPECT_EQ(ri->owner_thread_id, 0u);
    EXPECT_EQ(ri->stat.count, 4u);

    pfs::mutex m{"app", "m"};
    pfs::condition_variable cv{"app", "cv"};
    const sync_instance* ci = pfs::test::find_instance(r, kArrayConds, &cv);
    const sync_instance* mi = pfs::test::find_instance(r, kArrayMutexes, &m);
    bool ready = false;
    std::thread waker_thread;
    {
      // The waker starts while this thread holds m, so it sets ready only once
      // the wait below has released m: the wait is a real one, however late this
      // thread gets there on a loaded machine.
      pfs::unique_lock l(m);
      std::thread waker([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        pfs::lock_guard g(m);
        ready = true;
        cv.notify_all();
      });
      cv.wait(l, [&] { return ready; });
      waker_thread = std::move(waker);
      EXPECT_EQ(mi->owner_thread_id, thread_id());
      EXPECT_EQ(cv.wait_for(l, std::chrono::milliseconds(1)), std::cv_status::timeout);
    }
    waker_thread.join();
    EXPECT_GE(ci->stat.count, 2u);
    EXPECT_GE(ci->stat.max, 900'000'000u);  // one wait of at least ~1 ms, in ps
    const wait_record* stack = pfs::test::stack_of(r, thread_id());
    bool saw_timed_wait = false;
    for (const auto& e : pfs::test::history_of(r, thread_id()))
      saw_timed_wait |=
          e.operation == kOpTimedWait && e.object_instance_begin == reinterpret_cast<std::uintptr_t>(&cv);
    EXPECT_TRUE(saw_timed_wait);
    (void)stack;
  });
}

TEST(Agent, ThreadsActorsAndIds) {
  in_child([] {
    ASSERT_TRUE(init(small_options("threads"))) << last_error();
    const region_map& r = *current_region();
    register_thread("app", "main", "main-thread");
    const std::uint64_t main_id = thread_id();
    std::uint32_t slot = 0;
    const thread_record* tr = pfs::test::find_thread(r, main_id, &slot);
    ASSERT_NE(tr, nullptr);
    EXPECT_EQ(std::string(r.array<class_record>(kArrayClasses)[tr->class_index - 1].name), "thread/app/main");
    EXPECT_EQ(std::string(tr->name), "main-thread");
    EXPECT_EQ(tr->instrumented, 1);
    EXPECT_EQ(tr->foreground, 0);
    {
      setup_lock_guard lock(r);
      ASSERT_EQ(setup::insert_actor(r, "%", "bob", "%", false, false), setup::actor_result::ok);
      ASSERT_EQ(setup::insert_actor(r, "%", "bob", "%", false, false), setup::actor_result::duplicate);
      ASSERT_EQ(setup::insert_actor(r, "db1", "carol", "%", true, false), setup::actor_result::ok);
    }
    std::vector<std::uint64_t> ids;
    for (const char* user : {"bob", "carol", "dave"}) {
      std::thread t([&] {
        set_thread_actor(user, "db1");
        const thread_record* me = pfs::test::find_thread(r, thread_id(), nullptr);
        ASSERT_NE(me, nullptr);
        EXPECT_EQ(me->foreground, 1);
        EXPECT_EQ(me->parent_thread_id, 0u);  // registered on its own first use
        if (std::string(user) == "bob") {
          EXPECT_EQ(me->instrumented, 0);
          EXPECT_EQ(me->derived, 0);
        } else if (std::string(user) == "carol") {
          EXPECT_EQ(me->instrumented, 1);
          EXPECT_EQ(me->history, 0);
          EXPECT_EQ(me->derived & kThreadHistory, 0);
        } else {
          EXPECT_EQ(me->instrumented, 1);  // the default '%' row
          EXPECT_EQ(me->history, 1);
        }
        ids.push_back(thread_id());
      });
      t.join();
    }
    // THREAD_ID is unique and never reused, although the slots are.
    EXPECT_EQ(ids.size(), 3u);
    EXPECT_LT(main_id, ids[0]);
    EXPECT_LT(ids[0], ids[1]);
    EXPECT_LT(ids[1], ids[2]);
    for (auto id : ids) EXPECT_EQ(pfs::test::find_thread(r, id, nullptr), nullptr);  // exited: freed
  });
}

TEST(Agent, SwitchingTheWaitTimerKeepsDurationsSane) {
  in_child([] {
    ASSERT_TRUE(init(small_options("timer"))) << last_error();
    const region_map& r = *current_region();
    pfs::mutex m{"app", "m"};
    pfs_wait_locker l;
    ASSERT_EQ(pfs_start_mutex_wait(&l, m.psi(), PFS_OP_LOCK, "t.c", 1), 1);
    const std::uint8_t before = r.header().wait_timer;
    ASSERT_TRUE(set_wait_timer(before == 2 ? "MICROSECOND" : "NANOSECOND"));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    pfs_end_mutex_wait(&l, 0);
    pfs_unlock_mutex(m.psi());
    const sync_instance* inst = pfs::test::find_instance(r, kArrayMutexes, &m);
    // The in-flight wait finished with the timer it started with: about 2 ms.
    EXPECT_GE(inst->stat.sum, 1'900'000'000u);
    EXPECT_LE(inst->stat.sum, 1'000'000'000'000u);
    { pfs::lock_guard g(m); }
    EXPECT_EQ(pfs::test::stack_of(r, thread_id())[0].timer, r.header().wait_timer);
    EXPECT_FALSE(set_wait_timer("NOSUCH"));
  });
}

TEST(Agent, RegionOutlivesTheProcessAndTellsItExited) {
  const std::string path = pfs::test::temp_region_path("outlive");
  in_child([&] {
    options o = small_options("outlive");
    o.region_path = path;
    o.remove_at_exit = false;
    ASSERT_TRUE(init(o)) << last_error();
    pfs::mutex m{"app", "m"};
    { pfs::lock_guard g(m); }
    region_error err;
    region_map other = region_map::open(path, false, err);
    ASSERT_FALSE(err) << err.message;
    EXPECT_TRUE(other.provider_alive());
    // A second provider may not take over a live region.
    region_map clash = region_map::create(path, o.sizes, 0600, err);
    EXPECT_EQ(err.code, region_errc::in_use);
    // End like a crash: no shutdown().
    fflush(nullptr);
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  });
  region_error err;
  region_map r = region_map::open(path, false, err);
  ASSERT_FALSE(err) << err.message;
  EXPECT_FALSE(r.provider_alive());
  EXPECT_EQ(r.header().exited, 0u);  // the child never called shutdown(): a crash looks like this
  r.unlink_file();
}

// threads.PARENT_THREAD_ID: the thread that spawned it, through pfs::thread (a
// std::thread drop-in), the C ABI's pfs_spawn_thread, and a grandchild; NULL for
// a thread std::thread made. Each thread reads its own record while it lives.
std::uint64_t my_parent() {
  std::uint32_t slot = 0;
  const thread_record* t = pfs::test::find_thread(*current_region(), thread_id(), &slot);
  return t == nullptr ? UINT64_MAX : t->parent_thread_id;
}

TEST(Agent, ThreadsRecordTheThreadThatSpawnedThem) {
  in_child([] {
    ASSERT_TRUE(init(small_options("parents"))) << last_error();
    register_thread("app", "main");
    const std::uint64_t main_id = thread_id();
    EXPECT_EQ(my_parent(), 0u);
    std::atomic<std::uint64_t> child_id{0}, child_parent{0}, grandchild_parent{0}, c_parent{0},
        plain_parent{1};
    pfs::thread t(
        [&](int registered) {
          if (registered) register_thread("app", "child");
          child_id = thread_id();
          child_parent = my_parent();
          pfs::thread g([&] { grandchild_parent = my_parent(); });  // registers on its first event
          g.join();
        },
        1);
    t.join();
    EXPECT_EQ(child_parent.load(), main_id);
    EXPECT_EQ(grandchild_parent.load(), child_id.load());
    pthread_t ct;
    ASSERT_EQ(pfs_spawn_thread(
                  &ct, nullptr,
                  [](void* p) -> void* {
                    static_cast<std::atomic<std::uint64_t>*>(p)->store(my_parent());
                    return nullptr;
                  },
                  &c_parent),
              0);
    pthread_join(ct, nullptr);
    EXPECT_EQ(c_parent.load(), main_id);
    std::thread s([&] { plain_parent = my_parent(); });
    s.join();
    EXPECT_EQ(plain_parent.load(), 0u);  // NULL: std::thread says nothing
    // The reader shows it as threads.PARENT_THREAD_ID.
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> live_id{0};
    pfs::thread live([&] {
      live_id = thread_id();
      while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    while (live_id == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::int64_t shown = -2;
    for (const auto& r : pfs::test::scan("threads"))
      if (pfs::test::I(r, "thread_id") == static_cast<std::int64_t>(live_id.load()))
        shown = pfs::test::I(r, "parent_thread_id");
    done = true;
    live.join();
    EXPECT_EQ(shown, static_cast<std::int64_t>(main_id));
  });
}

namespace {
// Every timer counts from the same instant: a CYCLE time and a NANOSECOND time
// read together convert to picoseconds that agree to within a few microseconds
// (the region reads the baselines back to back), so waits and stages line up.
TEST(Agent, TimersShareTheirZero) {
  if (!timers::info(timers::timer_kind::cycle).available) GTEST_SKIP() << "no CYCLE timer here";
  in_child([] {
    ASSERT_TRUE(init(small_options("zero"))) << last_error();
    const region_map& r = *current_region();
    const auto converter = [&r](timers::timer_kind k) {
      const auto& t = r.header().timers[static_cast<int>(k)];
      return timers::pico_converter{t.base, t.mult, t.shift};
    };
    const auto cycle = converter(timers::timer_kind::cycle);
    const auto ns = converter(timers::timer_kind::nanosecond);
    const std::uint64_t c = timers::read(timers::timer_kind::cycle);
    const std::uint64_t n = timers::read(timers::timer_kind::nanosecond);
    const double apart = std::abs(static_cast<double>(cycle.to_pico(c)) - static_cast<double>(ns.to_pico(n)));
    EXPECT_LT(apart, 20e6) << "CYCLE and NANOSECOND zeros " << apart / 1e6 << " us apart";
  });
}
}  // namespace

namespace {
// Seed 001: a wait timer the machine cannot use is a warning, and the agent starts
// with its default wait timer (a program started with PFS_WAIT_TIMER=CYCLE where the
// cycle counter is disabled).
TEST(Agent, UnavailableWaitTimerWarnsAndKeepsTheDefault) {
  const std::string dir = ::testing::TempDir();
  const std::string region = dir + "/unavailable_timer.pfs", out = dir + "/unavailable_timer.err";
  const std::string command =
      "PFS_TIMER_DISABLE_CYCLE=1 PFS_WAIT_TIMER=CYCLE PFS_REGION_GROUP= PFS_REGION=" + region +
      " PFS_REMOVE_REGION_AT_EXIT=1 " PFS_BUILD_DIR "/tools/pfs_demo --seconds=1 >/dev/null 2>" + out;
  EXPECT_EQ(std::system(command.c_str()), 0);
  std::FILE* f = std::fopen(out.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f) != nullptr) text += buf;
  std::fclose(f);
  EXPECT_NE(text.find("perfschema: warning: wait timer CYCLE is not available here (disabled by "
                      "PFS_TIMER_DISABLE_CYCLE); waits use NANOSECOND"),
            std::string::npos)
      << text;
}
}  // namespace

// Objects made and destroyed at ever new addresses (OpenSSL makes a lock for each of
// many short-lived contexts) keep reusing the first slots of their instance array,
// about twice as many as are alive at once: the array's pages the region writes stay
// few, where a start anywhere in the array wrote all of them over time (and a forked
// child's region copies every page its parent wrote).
TEST(Agent, ShortLivedInstancesStayOnTheFirstPagesOfTheirArray) {
  in_child([] {
    pfs::options o = small_options("short_lived");
    o.sizes.max_rwlocks = 4096;  // 512 KiB of 128-byte instances
    // A region per process (%p) is sparse: the file holds the pages written.
    const std::string path = o.region_path + "." + std::to_string(getpid());
    o.region_path += ".%p";
    ASSERT_TRUE(pfs::init(o)) << pfs::last_error();
    const pfs_key key = pfs_register_rwlock("test", "short_lived");
    ASSERT_NE(key, 0u);
    static char objects[20000];
    pfs_sync* alive[8] = {};
    for (int i = 0; i < 20000; ++i) {
      pfs_sync*& slot = alive[i % 8];
      if (slot != nullptr) pfs_destroy_sync(slot);
      slot = pfs_init_rwlock(key, &objects[i]);
      ASSERT_NE(slot, nullptr) << i;
    }
    region_error err;
    region_map r = region_map::open(path, false, err);
    ASSERT_TRUE(r.valid()) << err.message;
    const array_desc& rw = r.header().arrays[kArrayRwlocks];
    ASSERT_EQ(rw.count, 4096u);
    // The array's data on disk (SEEK_DATA / SEEK_HOLE): a window of 64 + 2 x 8 slots
    // rounded up to 128, 16 KiB, at the start of the array.
    std::uint64_t data = 0;
    for (off_t pos = static_cast<off_t>(rw.offset),
               end = static_cast<off_t>(rw.offset + rw.count * rw.stride);
         pos < end;) {
      const off_t d = lseek(r.fd(), pos, SEEK_DATA);
      if (d < 0 || d >= end) break;
      const off_t h = std::min<off_t>(lseek(r.fd(), d, SEEK_HOLE), end);
      data += static_cast<std::uint64_t>(h - d);
      pos = h;
    }
    EXPECT_LE(data, 20u * 1024) << "of " << rw.count * rw.stride;
    EXPECT_GT(data, 0u);
    for (pfs_sync* s : alive) pfs_destroy_sync(s);
  });
}

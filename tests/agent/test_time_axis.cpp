// One time axis: waits (CYCLE), stages, statements and transactions (NANOSECOND
// rows of setup_timers) are read on one clock, so that every nested event lies
// inside its parent's [TIMER_START, TIMER_END] (region_layout.h event_clock).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

using namespace pfs;
using namespace pfs::test;

options axis_options() {
  options o = small_options("time_axis");
  o.sizes.max_classes = 64;
  o.sizes.history_long_size = 4096;
  o.sizes.stages_history_long_size = 1024;
  o.sizes.statements_history_long_size = 512;
  o.sizes.transactions_history_long_size = 256;
  o.consumers =
      "events_waits_history_long=ON,events_stages_current=ON,events_stages_history_long=ON,"
      "events_statements_history_long=ON,events_transactions_history_long=ON";
  return o;
}

using event_key = std::pair<std::int64_t, std::int64_t>;  // thread_id, event_id
struct span {
  std::int64_t start, end;
};

std::map<event_key, span> spans_of(const char* table) {
  std::map<event_key, span> out;
  for (const auto& r : scan(table))
    out[{I(r, "thread_id"), I(r, "event_id")}] = span{I(r, "timer_start"), I(r, "timer_end")};
  return out;
}

// Counts the children of `table` nested in a `parent_type` event found in
// `parents`; fails for every one that sticks out of its parent.
int check_inside(const char* table, const char* parent_type, const std::map<event_key, span>& parents) {
  int checked = 0;
  for (const auto& r : scan(table)) {
    if (S(r, "nesting_event_type") != parent_type) continue;
    const auto p = parents.find({I(r, "thread_id"), I(r, "nesting_event_id")});
    if (p == parents.end()) continue;  // the parent left history_long
    ++checked;
    EXPECT_GE(I(r, "timer_start"), p->second.start) << table << " event " << I(r, "event_id");
    EXPECT_LE(I(r, "timer_end"), p->second.end) << table << " event " << I(r, "event_id");
  }
  return checked;
}

TEST(TimeAxis, NestedEventsLieInsideTheirParents) {
  in_child([] {
    ASSERT_TRUE(init(axis_options())) << last_error();
    statement_class query{"test", "query"};
    stage_class parse{"test", "parse"}, execute{"test", "execute"};
    mutex shared{"test", "shared"};
    auto work = [&] {
      for (int i = 0; i < 100; ++i) {
        transaction trx(false, isolation::read_committed);
        {
          statement s(query, "shop");
          set_stage(parse);
          for (int k = 0; k < 3; ++k) lock_guard g(shared);  // contended now and then
          set_stage(execute);
          for (int k = 0; k < 3; ++k) {
            lock_guard g(shared);
            std::this_thread::yield();
          }
          s.rows(0, 1, 1);
        }
        trx.commit();
      }
    };
    std::thread a(work), b(work);
    a.join();
    b.join();

    const auto statements = spans_of("events_statements_history_long");
    const auto stages = spans_of("events_stages_history_long");
    const auto transactions = spans_of("events_transactions_history_long");
    EXPECT_GE(check_inside("events_waits_history_long", "STAGE", stages), 500);
    EXPECT_GE(check_inside("events_stages_history_long", "STATEMENT", statements), 200);
    EXPECT_GE(check_inside("events_statements_history_long", "TRANSACTION", transactions), 150);
    // The NANOSECOND rows are shown in whole nanoseconds (read on the CYCLE clock
    // when the wait timer is CYCLE, start rounded down, end up).
    for (const auto& [key, st] : stages) {
      EXPECT_EQ(st.start % 1000, 0) << key.second;
      EXPECT_EQ(st.end % 1000, 0) << key.second;
    }
  });
}

}  // namespace

// pfs_otlp's rounds (tools/otlp/otlp_events.h): a child read one round after its
// parent, when an ancestor between them has left its ring, still joins its
// parent's trace, through the links the last round kept (region_memory), also in a
// restarted exporter (the state file). The round that read the child late is made
// here by moving the waits' cursor back, as if the wait had ended between the
// round's scan of the waits and its scan of the stages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_work.h"
#include "agent/reader/reader.h"
#include "tests/agent/agent_test_util.h"
#include "tools/otlp/otlp_events.h"
#include "tools/otlp/otlp_spans.h"
#include "tools/otlp/otlp_state.h"

namespace {

using namespace pfs;
using namespace pfs::test;
using namespace pfs::otlp;

std::vector<span> read_round(const std::string& path, region_memory& memory) {
  region_error err;
  auto r = reader::region_reader::open(path, false, err);
  EXPECT_TRUE(r) << err.message;
  if (!r) return {};
  region_events events;
  EXPECT_EQ(read_region_events(*r, 0, memory, events).code, region_errc::ok);
  std::vector<span> spans;
  build_spans(events, 0, events.completed.size(), spans);
  return spans;
}

const span* named(const std::vector<span>& spans, const std::string& name) {
  for (const span& s : spans)
    if (s.name == name) return &s;
  return nullptr;
}

void forget_the_waits(region_memory& m) {
  std::erase_if(m.where,
                [](const auto& entry) { return entry.first.second == static_cast<int>(event_kind::wait); });
}

TEST(OtlpLineage, AChildReadARoundAfterItsParentJoinsItsTrace) {
  in_child([] {
    options o = small_options("otlp_lineage");
    o.sizes.max_classes = 64;
    o.sizes.stages_history_long_size = 2;  // the stage leaves its ring after two more
    o.sizes.statements_history_long_size = 16;
    o.consumers =
        "events_stages_current=ON,events_stages_history_long=ON,events_statements_history_long=ON,"
        "events_waits_history_long=ON";
    ASSERT_TRUE(init(o)) << last_error();
    statement_class query{"test", "query"};
    stage_class sending{"test", "sending"}, other{"test", "other"};
    pfs::mutex lock("test", "lock");
    {
      statement s(query);
      stage st(sending);
      lock.lock();  // a wait in the stage
      lock.unlock();
    }
    region_memory memory;
    const std::vector<span> first = read_round(o.region_path, memory);
    const span* wait = named(first, "wait/synch/mutex/test/lock");
    const span* stage1 = named(first, "stage/test/sending");
    const span* statement1 = named(first, "statement/test/query");
    ASSERT_TRUE(wait && stage1 && statement1);
    ASSERT_EQ(wait->parent, stage1->id);
    ASSERT_EQ(wait->trace, statement1->trace);
    ASSERT_EQ(stage1->trace, statement1->trace);

    forget_the_waits(memory);
    {
      statement s(query);
      stage a(other);
      a.end();
      stage b(other);  // the first stage is no longer in its ring
    }
    region_memory restarted;  // a restarted exporter: the memory through the state file
    {
      const std::string state = o.region_path + ".state";
      std::string error;
      ASSERT_TRUE(save_state(state, {{{1, 2}, memory}}, error)) << error;
      export_state loaded = load_state(state);
      unlink(state.c_str());
      ASSERT_EQ(loaded.size(), 1u);
      restarted = loaded.begin()->second;
      EXPECT_EQ(restarted.where.size(), memory.where.size());
      EXPECT_EQ(restarted.links.size(), memory.links.size());
    }
    region_memory forgot = memory;
    forgot.links.clear();

    for (region_memory* m : {&memory, &restarted}) {
      const std::vector<span> late = read_round(o.region_path, *m);
      EXPECT_EQ(named(late, "stage/test/sending"), nullptr);  // already exported, and gone
      const span* again = named(late, "wait/synch/mutex/test/lock");
      ASSERT_NE(again, nullptr);
      EXPECT_EQ(again->parent, stage1->id);
      EXPECT_EQ(again->trace, statement1->trace) << (m == &memory ? "the same exporter" : "restarted");
    }
    // What the kept links are for: without them the chain ends at the missing stage.
    const std::vector<span> without = read_round(o.region_path, forgot);
    const span* alone = named(without, "wait/synch/mutex/test/lock");
    ASSERT_NE(alone, nullptr);
    EXPECT_NE(alone->trace, statement1->trace);
  });
}

}  // namespace

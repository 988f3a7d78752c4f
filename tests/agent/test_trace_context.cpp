// The caller's W3C trace context on statements and transactions (beyond MySQL:
// TRACE_ID and PARENT_SPAN_ID), through the C++ API and the C ABI, read back through
// the reader: valid traceparents as given, invalid ones ignored, and a statement
// started after a traced one carries none.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/provider/pfs_c.h"
#include "agent/reader/reader.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

using namespace pfs;
using pfs::test::in_child;
using pfs::test::S;
using pfs::test::scan;
using pfs::test::small_options;

options trace_options(const char* tag) {
  options o = small_options(tag);
  o.sizes.statements_history_size = 16;
  o.sizes.transactions_history_size = 4;
  o.consumers = "events_statements_history=ON,events_transactions_history=ON";
  return o;
}

constexpr const char* kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContext, StatementsCarryAValidTraceparentAndIgnoreOthers) {
  in_child([] {
    ASSERT_TRUE(init(trace_options("trace_ctx"))) << last_error();
    statement_class q{"test", "request"};
    const std::vector<const char*> given = {
        kValid,
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future",  // a later version may add fields
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",         // upper case
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",         // zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",         // zero parent
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",         // version ff
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",       // version 00 has 4 fields
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba9",                // cut short
        "",
        nullptr,
    };
    for (const char* header : given) {
      statement s(q, "shop");
      s.traceparent(header);
    }
    { statement after(q, "shop"); }  // a fresh statement: none
    const auto rows = scan("events_statements_history");
    ASSERT_EQ(rows.size(), given.size() + 1);
    EXPECT_EQ(S(rows[0], "trace_id"), "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_EQ(S(rows[0], "parent_span_id"), "00f067aa0ba902b7");
    EXPECT_EQ(S(rows[1], "trace_id"), "4bf92f3577b34da6a3ce929d0e0e4736");
    for (std::size_t i = 2; i < rows.size(); ++i) {
      EXPECT_EQ(S(rows[i], "trace_id"), "<NULL>") << i;
      EXPECT_EQ(S(rows[i], "parent_span_id"), "<NULL>") << i;
    }
  });
}

TEST(TraceContext, TransactionsThroughTheCAbi) {
  in_child([] {
    ASSERT_TRUE(init(trace_options("trace_ctx_trx"))) << last_error();
    ASSERT_NE(pfs_transaction_start(0, PFS_ISOLATION_READ_COMMITTED, 0, __FILE__, __LINE__), 0);
    pfs_transaction_set_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    pfs_transaction_end(1);
    ASSERT_NE(pfs_transaction_start(0, PFS_ISOLATION_READ_COMMITTED, 0, __FILE__, __LINE__), 0);
    pfs_transaction_end(1);
    const auto rows = scan("events_transactions_history");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(S(rows[0], "trace_id"), "0af7651916cd43dd8448eb211c80319c");
    EXPECT_EQ(S(rows[0], "parent_span_id"), "b7ad6b7169203331");
    EXPECT_EQ(S(rows[1], "trace_id"), "<NULL>");
    // Outside a transaction the call does nothing (and does not crash).
    pfs_transaction_set_traceparent(nullptr);
    pfs_statement_set_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  });
}

}  // namespace

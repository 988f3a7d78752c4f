// Error instrumentation end to end: declared errors raised and handled through the
// C ABI and the C++ API, read back exactly from events_errors_summary_by_thread_by_error
// and events_errors_summary_global_by_error; the NULL row, a statement's
// MYSQL_ERRNO, exited threads, TRUNCATE of each table, the instrument disabled,
// and declarations beyond PFS_MAX_ERRORS counted as lost.
#include <gtest/gtest.h>
#include <time.h>

#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs_error.h"
#include "agent/provider/pfs_work.h"
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

options error_options(const char* tag, std::uint32_t max_errors = 8) {
  options o = small_options(tag);
  o.sizes.max_errors = max_errors;
  return o;
}

// The row of an error (number -1: the NULL row), of a thread when thread_id is not 0.
named_row row_of(std::int64_t number, std::uint64_t thread_id = 0) {
  const char* table =
      thread_id == 0 ? "events_errors_summary_global_by_error" : "events_errors_summary_by_thread_by_error";
  for (const auto& r : scan(table))
    if (I(r, "error_number") == number &&
        (thread_id == 0 || I(r, "thread_id") == static_cast<std::int64_t>(thread_id)))
      return r;
  ADD_FAILURE() << "no row for error " << number << " in " << table;
  return {};
}

// SUM_ERROR_RAISED, SUM_ERROR_HANDLED.
std::vector<std::int64_t> counts(const named_row& r) {
  if (r.empty()) return {};
  return {I(r, "sum_error_raised"), I(r, "sum_error_handled")};
}
using V = std::vector<std::int64_t>;

TEST(Errors, RaisedAndHandledAreCountedExactlyPerThreadAndError) {
  in_child([] {
    ASSERT_TRUE(init(error_options("err_exact")));
    const auto before = static_cast<std::int64_t>(time(nullptr)) * 1000000;
    ASSERT_EQ(pfs_register_error(1032, "ER_KEY_NOT_FOUND", "HY000"), 1);
    ASSERT_EQ(pfs_register_error(1213, "ER_LOCK_DEADLOCK", "40001"), 1);
    EXPECT_EQ(pfs_register_error(1032, "ER_KEY_NOT_FOUND", "HY000"), 1);  // again: the same row
    for (int i = 0; i < 5; ++i) pfs_log_error(1032, PFS_ERROR_RAISED);
    for (int i = 0; i < 2; ++i) pfs_log_error(1032, PFS_ERROR_HANDLED);
    pfs_log_error(1213, PFS_ERROR_RAISED);
    const std::uint64_t me = thread_id();
    // As MySQL: a handled error moves from raised to handled.
    EXPECT_EQ(counts(row_of(1032, me)), (V{3, 2}));
    EXPECT_EQ(counts(row_of(1213, me)), (V{1, 0}));
    EXPECT_EQ(counts(row_of(1032)), (V{3, 2}));
    const named_row r = row_of(1032, me);
    EXPECT_EQ(S(r, "error_name"), "ER_KEY_NOT_FOUND");
    EXPECT_EQ(S(r, "sql_state"), "HY000");
    const auto after = static_cast<std::int64_t>(time(nullptr)) * 1000000;
    EXPECT_GE(I(r, "first_seen"), before);
    EXPECT_LE(I(r, "last_seen"), after);
    EXPECT_LE(I(r, "first_seen"), I(r, "last_seen"));
    // The declared errors and the NULL row, nothing else; never seen: NULL times.
    const auto rows = scan("events_errors_summary_global_by_error");
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(I(rows[0], "error_number"), -1);  // the NULL row first, as MySQL
    EXPECT_EQ(S(rows[0], "error_name"), "<NULL>");
    EXPECT_EQ(I(rows[0], "first_seen"), -1);
  });
}

TEST(Errors, AnErrorNeverDeclaredCountsInTheNullRow) {
  in_child([] {
    ASSERT_TRUE(init(error_options("err_null")));
    error::raised(50001);
    error::raised(50002);
    error::handled(50002);
    EXPECT_EQ(counts(row_of(-1, thread_id())), (V{1, 1}));
    EXPECT_EQ(counts(row_of(-1)), (V{1, 1}));
    EXPECT_NE(I(row_of(-1), "last_seen"), -1);
  });
}

TEST(Errors, TheCxxApiDeclaresOnFirstUse) {
  in_child([] {
    ASSERT_TRUE(init(error_options("err_cxx")));
    static constinit error_def timeout{3024, "ER_QUERY_TIMEOUT", "HY000"};
    timeout.raised();
    timeout.raised();
    timeout.handled();
    EXPECT_EQ(counts(row_of(3024, thread_id())), (V{1, 1}));
    EXPECT_EQ(S(row_of(3024), "error_name"), "ER_QUERY_TIMEOUT");
  });
}

TEST(Errors, AStatementsErrorIsCountedAsRaised) {
  in_child([] {
    ASSERT_TRUE(init(error_options("err_stmt")));
    ASSERT_EQ(pfs_register_error(1146, "ER_NO_SUCH_TABLE", "42S02"), 1);
    const statement_class query{"sql", "select"};
    {
      statement s(query);
      s.error(1146, "42S02", "Table 'app.t' doesn't exist");
    }
    EXPECT_EQ(counts(row_of(1146, thread_id())), (V{1, 0}));
  });
}

TEST(Errors, AnExitedThreadsCountsStayInTheGlobalTable) {
  in_child([] {
    ASSERT_TRUE(init(error_options("err_exit")));
    ASSERT_EQ(pfs_register_error(1205, "ER_LOCK_WAIT_TIMEOUT", "HY000"), 1);
    pfs_log_error(1205, PFS_ERROR_RAISED);
    std::uint64_t other = 0;
    std::thread t([&] {
      register_thread("test", "worker");
      other = thread_id();
      for (int i = 0; i < 4; ++i) pfs_log_error(1205, PFS_ERROR_RAISED);
      EXPECT_EQ(counts(row_of(1205, other)), (V{4, 0}));
      unregister_thread();
    });
    t.join();
    EXPECT_EQ(counts(row_of(1205, thread_id())), (V{1, 0}));
    EXPECT_EQ(counts(row_of(1205)), (V{5, 0}));
    for (const auto& r : scan("events_errors_summary_by_thread_by_error"))
      EXPECT_NE(I(r, "thread_id"), static_cast<std::int64_t>(other));  // its rows left with it
  });
}

TEST(Errors, TruncateByThreadKeepsTheGlobalTotalsAndGlobalResetsAll) {
  in_child([] {
    ASSERT_TRUE(init(error_options("err_truncate")));
    ASSERT_EQ(pfs_register_error(1062, "ER_DUP_ENTRY", "23000"), 1);
    for (int i = 0; i < 3; ++i) pfs_log_error(1062, PFS_ERROR_RAISED);
    const std::uint64_t me = thread_id();
    setup::reset_error_summaries(*current_region(), true);
    const named_row mine = row_of(1062, me);
    EXPECT_EQ(counts(mine), (V{0, 0}));
    EXPECT_EQ(I(mine, "first_seen"), -1);
    EXPECT_EQ(counts(row_of(1062)), (V{3, 0}));  // MySQL: the global table keeps its totals
    pfs_log_error(1062, PFS_ERROR_RAISED);
    EXPECT_EQ(counts(row_of(1062)), (V{4, 0}));
    setup::reset_error_summaries(*current_region(), false);
    EXPECT_EQ(counts(row_of(1062)), (V{0, 0}));
    EXPECT_EQ(counts(row_of(1062, me)), (V{0, 0}));
    EXPECT_EQ(I(row_of(1062), "last_seen"), -1);
  });
}

TEST(Errors, TheErrorInstrumentDisabledCountsNothing) {
  in_child([] {
    ASSERT_TRUE(init(error_options("err_off")));
    ASSERT_EQ(pfs_register_error(1040, "ER_CON_COUNT_ERROR", "08004"), 1);
    bool found = false;
    for (const auto& r : scan("setup_instruments")) {
      if (S(r, "name") != "error") continue;
      found = true;
      EXPECT_EQ(S(r, "enabled"), "YES");  // MySQL's default
      EXPECT_EQ(S(r, "timed"), "<NULL>");
    }
    EXPECT_TRUE(found) << "no 'error' row in setup_instruments";
    ASSERT_TRUE(set_instrument("error", false, false));
    pfs_log_error(1040, PFS_ERROR_RAISED);
    EXPECT_EQ(counts(row_of(1040, thread_id())), (V{0, 0}));
    ASSERT_TRUE(set_instrument("error", true, false));
    pfs_log_error(1040, PFS_ERROR_RAISED);
    EXPECT_EQ(counts(row_of(1040, thread_id())), (V{1, 0}));
  });
}

TEST(Errors, DeclarationsBeyondTheTableAreLostAndCountInTheNullRow) {
  in_child([] {
    ASSERT_TRUE(init(error_options("err_lost", 2)));
    EXPECT_EQ(pfs_register_error(1, "ER_ONE", nullptr), 1);
    EXPECT_EQ(pfs_register_error(2, "ER_TWO", nullptr), 1);
    EXPECT_EQ(pfs_register_error(3, "ER_THREE", nullptr), 0);
    EXPECT_EQ(pfs_register_error(4, std::string(64, 'X').c_str(), nullptr), 0);  // name too long
    pfs_log_error(3, PFS_ERROR_RAISED);
    EXPECT_EQ(counts(row_of(-1)), (V{1, 0}));
    EXPECT_EQ(S(row_of(2), "sql_state"), "<NULL>");
    std::int64_t lost = -1;
    for (const auto& r : scan("status"))
      if (S(r, "variable_name") == "errors_lost") lost = I(r, "variable_value");
    EXPECT_EQ(lost, 1);
  });
}

}  // namespace

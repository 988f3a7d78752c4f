// Units of work end to end: a scripted workload of statements, stages,
// transactions and waits through the C++ API, read back through the reader:
// exact nesting (ids, levels, types), summaries, digests, histograms and
// quantiles, TRUNCATE, threads' processlist columns, and bad call sequences.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "agent/reader/reader.h"
#include "agent/region/histogram.h"
#include "agent/region/setup.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"
#include "timers/timer.h"

namespace {

using namespace pfs;
using pfs::test::in_child;
using pfs::test::small_options;

using pfs::test::I;
using pfs::test::named_row;
using pfs::test::S;
using pfs::test::scan;
using pfs::test::scan_columns;

const named_row* find(const std::vector<named_row>& rows, const char* column, const std::string& value) {
  for (const auto& r : rows)
    if (S(r, column) == value) return &r;
  return nullptr;
}

std::map<std::string, std::int64_t> status() {
  std::map<std::string, std::int64_t> s;
  for (const auto& r : scan("status")) s[S(r, "variable_name")] = I(r, "variable_value");
  return s;
}

options work_options(const char* tag) {
  options o = small_options(tag);
  o.sizes.max_classes = 64;
  o.sizes.digest_size = 16;
  o.sizes.stages_history_size = 8;
  o.sizes.statements_history_size = 8;
  o.sizes.transactions_history_size = 4;
  o.sizes.stages_history_long_size = 64;
  o.sizes.statements_history_long_size = 64;
  o.sizes.transactions_history_long_size = 16;
  o.sizes.max_sql_text_length = 64;
  o.sizes.history_per_thread = 16;
  o.consumers =
      "events_stages_current=ON,events_stages_history=ON,events_stages_history_long=ON,"
      "events_statements_history_long=ON,events_transactions_history_long=ON";
  return o;
}

// MySQL's rule: a statement nests in the later-started of the running statement
// and the running transaction. A transaction begun inside a statement is the
// parent of the statements that statement runs after it (a stored procedure's
// START TRANSACTION, then its statements); one begun before the statement is not.
TEST(Work, AStatementNestsInTheTransactionItsParentStatementBegan) {
  in_child([] {
    ASSERT_TRUE(init(work_options("work_nest_trx"))) << last_error();
    statement_class call{"test", "call"}, sub{"test", "insert"}, later{"test", "after"};
    {
      statement outer(call, "shop");
      {
        statement before(later, "shop");  // no transaction yet: in the outer statement
      }
      transaction trx(false, isolation::read_committed);
      {
        statement inner(sub, "shop");  // the transaction started after the outer statement
      }
      trx.commit();
    }
    {
      transaction trx(false, isolation::read_committed);
      statement outer(later, "shop");  // at the top: in the transaction
      statement inner(sub, "shop");    // the statement started after the transaction
    }
    const auto stmts = scan("events_statements_history");
    const auto trxs = scan("events_transactions_history");
    ASSERT_EQ(stmts.size(), 5u);
    ASSERT_EQ(trxs.size(), 2u);
    const std::int64_t trx1 = I(trxs[0], "event_id"), trx2 = I(trxs[1], "event_id");
    const std::int64_t outer1 = I(stmts[2], "event_id");
    EXPECT_EQ(S(stmts[0], "event_name"), "statement/test/after");
    EXPECT_EQ(S(stmts[0], "nesting_event_type"), "STATEMENT");
    EXPECT_EQ(I(stmts[0], "nesting_event_id"), outer1);
    EXPECT_EQ(S(stmts[1], "event_name"), "statement/test/insert");
    EXPECT_EQ(S(stmts[1], "nesting_event_type"), "TRANSACTION");
    EXPECT_EQ(I(stmts[1], "nesting_event_id"), trx1);
    EXPECT_EQ(I(stmts[1], "nesting_event_level"), 1);
    EXPECT_EQ(S(stmts[2], "event_name"), "statement/test/call");
    EXPECT_EQ(S(stmts[2], "nesting_event_type"), "<NULL>");
    EXPECT_EQ(S(stmts[3], "event_name"), "statement/test/insert");
    EXPECT_EQ(S(stmts[3], "nesting_event_type"), "STATEMENT");
    EXPECT_EQ(I(stmts[3], "nesting_event_id"), I(stmts[4], "event_id"));
    EXPECT_EQ(S(stmts[4], "nesting_event_type"), "TRANSACTION");
    EXPECT_EQ(I(stmts[4], "nesting_event_id"), trx2);
    // The first transaction nests in the statement that began it.
    EXPECT_EQ(S(trxs[0], "nesting_event_type"), "STATEMENT");
    EXPECT_EQ(I(trxs[0], "nesting_event_id"), outer1);
  });
}

TEST(Work, NestingOfStatementsStagesTransactionsAndWaits) {
  in_child([] {
    ASSERT_TRUE(init(work_options("work_nest"))) << last_error();
    statement_class request{"test", "request"}, sub{"test", "subquery"};
    stage_class parse{"test", "parse"}, execute{"test", "execute"};
    mutex m{"test", "m"};
    {
      transaction trx(false, isolation::read_committed);
      {
        statement s(request, "shop");
        s.text("SELECT * FROM t WHERE id = 42");
        set_stage(parse);
        { lock_guard g(m); }  // nests in stage parse
        stage st(execute);
        {
          statement inner(sub, "shop");  // nests in the request
          inner.text("SELECT 1");
          lock_guard g(m);  // nests in the inner statement
        }
        { lock_guard g(m); }  // back in stage execute
        s.rows(0, 1, 10);
      }
      trx.commit();
    }
    const auto stmts = scan("events_statements_history");
    ASSERT_EQ(stmts.size(), 2u);
    const named_row* outer = find(stmts, "event_name", "statement/test/request");
    const named_row* inner = find(stmts, "event_name", "statement/test/subquery");
    ASSERT_TRUE(outer && inner);
    const auto trx = scan("events_transactions_history");
    ASSERT_EQ(trx.size(), 1u);
    EXPECT_EQ(S(trx[0], "state"), "COMMITTED");
    EXPECT_EQ(S(trx[0], "isolation_level"), "READ COMMITTED");
    EXPECT_EQ(S(trx[0], "access_mode"), "READ WRITE");
    EXPECT_EQ(S(trx[0], "gtid"), "AUTOMATIC");
    // The outer statement nests in the transaction, the inner one in the outer.
    EXPECT_EQ(S(*outer, "nesting_event_type"), "TRANSACTION");
    EXPECT_EQ(I(*outer, "nesting_event_id"), I(trx[0], "event_id"));
    EXPECT_EQ(I(*outer, "nesting_event_level"), 0);
    EXPECT_EQ(S(*inner, "nesting_event_type"), "STATEMENT");
    EXPECT_EQ(I(*inner, "nesting_event_id"), I(*outer, "event_id"));
    EXPECT_EQ(I(*inner, "nesting_event_level"), 1);
    EXPECT_EQ(S(*outer, "sql_text"), "SELECT * FROM t WHERE id = 42");
    EXPECT_EQ(S(*outer, "digest_text"), "SELECT * FROM `t` WHERE `id` = ?");
    EXPECT_EQ(S(*outer, "current_schema"), "shop");
    EXPECT_EQ(I(*outer, "rows_sent"), 1);
    EXPECT_EQ(I(*outer, "rows_examined"), 10);
    EXPECT_GT(I(*outer, "timer_wait"), 0);
    // END_EVENT_ID: the last event inside it (MySQL's rule).
    EXPECT_GE(I(*outer, "end_event_id"), I(*inner, "end_event_id"));
    EXPECT_GT(I(trx[0], "end_event_id"), I(*outer, "event_id"));

    const auto stages = scan("events_stages_history");
    ASSERT_EQ(stages.size(), 2u);
    const named_row* p = find(stages, "event_name", "stage/test/parse");
    const named_row* x = find(stages, "event_name", "stage/test/execute");
    ASSERT_TRUE(p && x);
    for (const named_row* st : {p, x}) {
      EXPECT_EQ(S(*st, "nesting_event_type"), "STATEMENT");
      EXPECT_EQ(I(*st, "nesting_event_id"), I(*outer, "event_id"));
    }
    // Every wait nests in a stage or a statement of this workload.
    const auto waits = scan("events_waits_history");
    std::vector<std::pair<std::string, std::int64_t>> nests;
    for (const auto& w : waits)
      if (S(w, "event_name") == "wait/synch/mutex/test/m")
        nests.emplace_back(S(w, "nesting_event_type"), I(w, "nesting_event_id"));
    ASSERT_EQ(nests.size(), 3u);
    EXPECT_EQ(nests[0], std::make_pair(std::string("STAGE"), I(*p, "event_id")));
    EXPECT_EQ(nests[1], std::make_pair(std::string("STATEMENT"), I(*inner, "event_id")));
    EXPECT_EQ(nests[2], std::make_pair(std::string("STAGE"), I(*x, "event_id")));
    // The ids come from one counter: the wait inside the inner statement lies
    // between its EVENT_ID and END_EVENT_ID.
    EXPECT_GT(I(*inner, "end_event_id"), I(*inner, "event_id"));
  });
}

TEST(Work, SummariesDigestsAndHistograms) {
  in_child([] {
    ASSERT_TRUE(init(work_options("work_sum"))) << last_error();
    statement_class q{"test", "query"};
    for (int i = 0; i < 20; ++i) {
      statement s(q, "db");
      // Same shape, different literals and spacing: one digest.
      s.text(i % 2 ? "select a from t where b = " + std::to_string(i)
                   : "SELECT  a FROM t WHERE b=" + std::to_string(i * 7));
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      if (i == 3) s.error(1062, "23000", "duplicate key");
      if (i == 4) s.warnings(2);
    }
    {
      statement other(q, "db");
      other.text("UPDATE t SET a = 1");
    }
    const auto global = scan("events_statements_summary_global_by_event_name");
    const named_row* g = find(global, "event_name", "statement/test/query");
    ASSERT_TRUE(g);
    EXPECT_EQ(I(*g, "count_star"), 21);
    EXPECT_EQ(I(*g, "sum_errors"), 1);
    EXPECT_EQ(I(*g, "sum_warnings"), 2);
    const auto by_thread = scan("events_statements_summary_by_thread_by_event_name");
    std::int64_t thread_total = 0;
    for (const auto& r : by_thread)
      if (S(r, "event_name") == "statement/test/query") thread_total += I(r, "count_star");
    EXPECT_EQ(thread_total, 21);

    const auto digests = scan("events_statements_summary_by_digest");
    ASSERT_EQ(digests.size(), 2u);
    const named_row* sel = find(digests, "digest_text", "SELECT `a` FROM `t` WHERE `b` = ?");
    ASSERT_TRUE(sel) << S(digests[0], "digest_text");
    EXPECT_EQ(I(*sel, "count_star"), 20);
    EXPECT_EQ(S(*sel, "schema_name"), "db");
    EXPECT_EQ(S(*sel, "digest").size(), 64u);
    EXPECT_FALSE(sel->at("first_seen").null);
    EXPECT_GE(I(*sel, "last_seen"), I(*sel, "first_seen"));
    EXPECT_NE(S(*sel, "query_sample_text"), "<NULL>");
    EXPECT_LE(I(*sel, "query_sample_timer_wait"), I(*sel, "max_timer_wait"));
    // Quantiles: the high bound of the bucket holding the rank, within one
    // bucket of the slowest statement.
    const std::uint64_t max = static_cast<std::uint64_t>(I(*sel, "max_timer_wait"));
    const std::uint64_t q999 = static_cast<std::uint64_t>(I(*sel, "quantile_999"));
    EXPECT_EQ(q999, histogram::bucket_high(histogram::bucket_of(max)));
    EXPECT_LE(I(*sel, "quantile_95"), I(*sel, "quantile_99"));
    EXPECT_GE(static_cast<std::uint64_t>(I(*sel, "quantile_95")), 200000000u);  // >= 200 us
    // The histograms hold every timed statement.
    std::int64_t in_buckets = 0;
    for (const auto& r : scan("events_statements_histogram_global")) in_buckets += I(r, "count_bucket");
    EXPECT_EQ(in_buckets, 21);
    std::int64_t sel_buckets = 0, last_and_lower = 0;
    for (const auto& r : scan("events_statements_histogram_by_digest"))
      if (S(r, "digest") == S(*sel, "digest")) {
        sel_buckets += I(r, "count_bucket");
        last_and_lower = I(r, "count_bucket_and_lower");
      }
    EXPECT_EQ(sel_buckets, 20);
    EXPECT_EQ(last_and_lower, 20);

    // TRUNCATE of the digest table empties it; of the global summary, zeroes it.
    setup::reset_digests(*current_region());
    EXPECT_TRUE(scan("events_statements_summary_by_digest").empty());
    setup::reset_statement_summaries(*current_region(), false);
    EXPECT_EQ(
        I(*find(scan("events_statements_summary_global_by_event_name"), "event_name", "statement/test/query"),
          "count_star"),
        0);
  });
}

TEST(Work, WaitHistogramsCountEveryTimedWait) {
  in_child([] {
    ASSERT_TRUE(init(work_options("work_whist"))) << last_error();
    mutex m{"test", "hist"};
    // Whether the thread waits on the mutex now (its running wait is in
    // events_waits_current): a sleep alone does not make sure it got there.
    auto waiting = [](std::uint64_t tid) {
      for (const auto& r : scan("events_waits_current"))
        if (I(r, "thread_id") == static_cast<std::int64_t>(tid) && I(r, "end_event_id") == -1 &&
            S(r, "event_name") == "wait/synch/mutex/test/hist")
          return true;
      return false;
    };
    for (int i = 0; i < 5; ++i) {
      m.lock();
      std::atomic<std::uint64_t> tid{0};
      std::thread t([&] {
        tid = thread_id();
        lock_guard g(m);  // waits about 2 ms
      });
      while (tid == 0 || !waiting(tid)) std::this_thread::sleep_for(std::chrono::microseconds(100));
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      m.unlock();
      t.join();
    }
    const auto global = scan("events_waits_summary_global_by_event_name");
    const named_row* g = find(global, "event_name", "wait/synch/mutex/test/hist");
    ASSERT_TRUE(g);
    std::int64_t in_buckets = 0, slow = 0;
    for (const auto& r : scan("events_waits_histogram_global_by_event_name")) {
      if (S(r, "event_name") != "wait/synch/mutex/test/hist") continue;
      in_buckets += I(r, "count_bucket");
      if (I(r, "bucket_timer_low") >= 1000000000) slow += I(r, "count_bucket");  // >= 1 ms
    }
    EXPECT_EQ(in_buckets, I(*g, "count_star"));
    EXPECT_EQ(slow, 5);  // the five contended waits
    EXPECT_GE(I(*g, "quantile_99"), 1000000000);
    // A query that reads a quantile gets the same value; one that reads none gets
    // its statistics without the histograms being summed (the quantiles NULL).
    const auto only_q =
        scan_columns("events_waits_summary_global_by_event_name", {"event_name", "quantile_99"});
    const named_row* q = find(only_q, "event_name", "wait/synch/mutex/test/hist");
    ASSERT_TRUE(q);
    EXPECT_EQ(I(*q, "quantile_99"), I(*g, "quantile_99"));
    const auto no_q = scan_columns("events_waits_summary_global_by_event_name", {"event_name", "count_star"});
    const named_row* n = find(no_q, "event_name", "wait/synch/mutex/test/hist");
    ASSERT_TRUE(n);
    EXPECT_EQ(I(*n, "count_star"), I(*g, "count_star"));
    EXPECT_TRUE(n->at("quantile_99").null);
    setup::reset_wait_histograms(*current_region());
    in_buckets = 0;
    for (const auto& r : scan("events_waits_histogram_global_by_event_name"))
      in_buckets += I(r, "count_bucket");
    EXPECT_EQ(in_buckets, 0);
  });
}

// The wait histogram starts at 1 ns (histogram.h wait_scale): uncontended
// acquisitions spread over buckets below 10 us instead of all falling into
// MySQL's statement bucket 0, and a contended one of at least 2 ms lies in a bucket
// whose range reaches 2 ms.
TEST(Work, WaitHistogramsSeeTheFastPath) {
  in_child([] {
    ASSERT_TRUE(init(work_options("work_whist_fast"))) << last_error();
    mutex m{"test", "fast"};
    for (int i = 0; i < 1000; ++i) lock_guard g(m);
    m.lock();
    std::atomic<bool> started{false};
    std::thread t([&] {
      started = true;
      lock_guard g(m);
    });
    while (!started) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    m.unlock();
    t.join();
    std::int64_t rows = 0, total = 0, below_10us = 0, buckets_below_10us = 0, reaching_2ms = 0;
    std::int64_t first_low = -1, first_high = -1;
    for (const auto& r : scan("events_waits_histogram_global_by_event_name")) {
      if (S(r, "event_name") != "wait/synch/mutex/test/fast") continue;
      if (rows++ == 0) first_low = I(r, "bucket_timer_low"), first_high = I(r, "bucket_timer_high");
      const std::int64_t n = I(r, "count_bucket");
      total += n;
      if (I(r, "bucket_timer_high") <= 10000000 && n > 0) {
        below_10us += n;
        ++buckets_below_10us;
      }
      if (I(r, "bucket_timer_high") > 2000000000) reaching_2ms += n;
    }
    EXPECT_EQ(rows, 552);
    EXPECT_EQ(first_low, 0);
    EXPECT_EQ(first_high, 1000);  // bucket 0: [0, 1 ns)
    EXPECT_EQ(total, 1002);  // 1000, the holder's lock and the waiter's
    EXPECT_GE(below_10us, 900);        // a loaded machine may preempt a few
    EXPECT_GE(buckets_below_10us, 2);  // spread, not one bucket
    EXPECT_GE(reaching_2ms, 1);        // the contended wait (the holder slept 20 ms)
  });
}

TEST(Work, ThreadsShowTheRunningStatementAndStage) {
  in_child([] {
    ASSERT_TRUE(init(work_options("work_threads"))) << last_error();
    statement_class q{"test", "request"};
    stage_class waiting{"test", "waiting for lock"};
    set_thread_connection(77, PFS_CONNECTION_SOCKET);
    {
      statement s(q, "inventory");
      s.text("SELECT stock FROM items");
      stage st(waiting);
      const auto threads = scan("threads");
      const named_row* me = nullptr;
      for (const auto& r : threads)
        if (I(r, "thread_id") == static_cast<std::int64_t>(thread_id())) me = &r;
      ASSERT_TRUE(me);
      EXPECT_EQ(I(*me, "processlist_id"), 77);
      EXPECT_EQ(S(*me, "type"), "FOREGROUND");
      EXPECT_EQ(S(*me, "processlist_command"), "Query");
      EXPECT_EQ(S(*me, "processlist_db"), "inventory");
      EXPECT_EQ(S(*me, "processlist_state"), "waiting for lock");
      EXPECT_EQ(S(*me, "processlist_info"), "SELECT stock FROM items");
      EXPECT_EQ(S(*me, "connection_type"), "Socket");
      EXPECT_GE(I(*me, "processlist_time"), 0);
      // Running events: END_EVENT_ID NULL, TIMER_END now.
      const auto cur = scan("events_statements_current");
      ASSERT_EQ(cur.size(), 1u);
      EXPECT_TRUE(cur[0].at("end_event_id").null);
      EXPECT_GE(I(cur[0], "timer_wait"), 0);
      const auto st_cur = scan("events_stages_current");
      ASSERT_EQ(st_cur.size(), 1u);
      EXPECT_TRUE(st_cur[0].at("end_event_id").null);
    }
    const auto after = scan("threads");
    const named_row* me = find(after, "processlist_command", "Sleep");
    ASSERT_TRUE(me);
    EXPECT_EQ(S(*me, "processlist_info"), "<NULL>");
  });
}

TEST(Work, EachKindHasItsOwnTimer) {
  in_child([] {
    ASSERT_TRUE(init(work_options("work_timer"))) << last_error();
    const region_map& m = *current_region();
    const auto rows = scan("setup_timers");
    ASSERT_EQ(rows.size(), 5u);
    EXPECT_EQ(S(rows[3], "name"), "statement");
    EXPECT_EQ(S(rows[3], "timer_name"), "NANOSECOND");  // MySQL 8.0's default (setup_timers)
    ASSERT_TRUE(setup::set_timer(m, setup::kTimerStatement, timers::timer_kind::microsecond));
    EXPECT_EQ(S(scan("setup_timers")[3], "timer_name"), "MICROSECOND");
    EXPECT_EQ(S(scan("setup_timers")[2], "timer_name"), "NANOSECOND");  // stage unchanged
    statement_class q{"test", "timed_in_us"};
    {
      statement s(q);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const auto h = scan("events_statements_history");
    ASSERT_EQ(h.size(), 1u);
    // A MICROSECOND timer: whole microseconds, in picoseconds.
    EXPECT_EQ(I(h[0], "timer_wait") % 1000000, 0);
    EXPECT_GE(I(h[0], "timer_wait"), 2000000000);
  });
}

TEST(Work, IdleWaitsAreSummarized) {
  in_child([] {
    ASSERT_TRUE(init(work_options("work_idle"))) << last_error();
    for (int i = 0; i < 3; ++i) {
      idle_wait idle;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const auto global = scan("events_waits_summary_global_by_event_name");
    const named_row* g = find(global, "event_name", "idle");
    ASSERT_TRUE(g);
    EXPECT_EQ(I(*g, "count_star"), 3);
    EXPECT_GE(I(*g, "min_timer_wait"), 1000000000);  // >= 1 ms
    const auto waits = scan("events_waits_history");
    ASSERT_TRUE(find(waits, "operation", "idle"));
    // The idle class survives its thread: an exited thread's counts stay.
    std::thread t([] { idle_wait idle; });
    t.join();
    EXPECT_EQ(I(*find(scan("events_waits_summary_global_by_event_name"), "event_name", "idle"), "count_star"),
              4);
  });
}

TEST(Work, BadCallSequencesAreCountedNotFatal) {
  in_child([] {
    ASSERT_TRUE(init(work_options("work_bad"))) << last_error();
    statement_class q{"test", "q"};
    stage_class st{"test", "lonely"};
    pfs_statement_end(1);  // an end without a start
    pfs_statement_set_text("x", 1);
    pfs_transaction_end(1);
    pfs_stage_start(st.key(), __FILE__, __LINE__);  // a stage outside a statement: recorded, no nesting
    pfs_stage_end();
    const int outer = pfs_statement_start(q.key(), nullptr, __FILE__, __LINE__);
    pfs_statement_start(q.key(), nullptr, __FILE__, __LINE__);  // left running inside
    pfs_statement_set_text(nullptr, 5);                         // NULL text: empty
    pfs_statement_end(outer);                                   // ends both
    {
      statement s(q);
      s.text(std::string(500, 'a'));  // over max_sql_text_length (64): cut, "..."
    }
    const auto s = status();
    EXPECT_EQ(s.at("work_call_errors"), 4);
    EXPECT_EQ(s.at("sql_text_truncated"), 1);
    const auto stages = scan("events_stages_history");
    ASSERT_EQ(stages.size(), 1u);
    EXPECT_TRUE(stages[0].at("nesting_event_id").null);
    const auto stmts = scan("events_statements_history");
    ASSERT_EQ(stmts.size(), 3u);
    const std::string cut = S(stmts[2], "sql_text");
    EXPECT_EQ(cut.size(), 64u);
    EXPECT_EQ(cut.substr(61), "...");
    // A thread that exits inside a statement and a transaction: no crash, and
    // what it finished stays counted.
    std::thread t([&] {
      { statement done(q); }
      pfs_transaction_start(0, 0, 1, __FILE__, __LINE__);
      pfs_statement_start(q.key(), nullptr, __FILE__, __LINE__);
    });
    t.join();
    const auto global = scan("events_statements_summary_global_by_event_name");
    const named_row* g = find(global, "event_name", "statement/test/q");
    ASSERT_TRUE(g);
    EXPECT_EQ(I(*g, "count_star"), 4);
  });
}

TEST(Work, TruncateHidesEventTables) {
  in_child([] {
    ASSERT_TRUE(init(work_options("work_trunc"))) << last_error();
    statement_class q{"test", "q"};
    stage_class st{"test", "s"};
    for (int i = 0; i < 3; ++i) {
      statement s(q);
      stage x(st);
      transaction t;
      t.commit();
    }
    const region_map& m = *current_region();
    EXPECT_EQ(scan("events_statements_history_long").size(), 3u);
    setup::truncate_events(m, layout::kTruncateStatementsHistoryLong);
    setup::truncate_events(m, layout::kTruncateStagesHistory);
    setup::truncate_events(m, layout::kTruncateTransactionsCurrent);
    EXPECT_TRUE(scan("events_statements_history_long").empty());
    EXPECT_TRUE(scan("events_stages_history").empty());
    EXPECT_TRUE(scan("events_transactions_current").empty());
    EXPECT_EQ(scan("events_statements_history").size(), 3u);
    { statement s(q); }
    EXPECT_EQ(scan("events_statements_history_long").size(), 1u);
    // TRUNCATE of a by-thread summary keeps the global totals.
    setup::reset_stage_summaries(m, true);
    EXPECT_EQ(I(*find(scan("events_stages_summary_global_by_event_name"), "event_name", "stage/test/s"),
                "count_star"),
              3);
    for (const auto& r : scan("events_stages_summary_by_thread_by_event_name"))
      EXPECT_EQ(I(r, "count_star"), 0);
  });
}

// A sink that keeps (thread_id, event_id, event_name) of each row and asks to
// pause every few rows, so that scans go on from a cursor.
struct head_sink final : reader::row_sink {
  std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> rows;
  std::size_t since_pause = 0;
  bool row(const reader::cell_view* cells, std::size_t) override {
    rows.emplace_back(cells[0].i, cells[1].i, std::string(cells[3].s));
    ++since_pause;
    return true;
  }
  bool pause(std::uint64_t) override {
    if (since_pause < 3) return false;
    since_pause = 0;
    return true;
  }
};

// The history_long tables of units of work under pushed conditions and in pieces:
// exactly the rows of a full scan that pass the same test.
TEST(Work, HistoryLongScansFilterAndPauseLikeTheFullScan) {
  in_child([] {
    options o = work_options("work_filter");
    o.sizes.stages_history_long_size = 512;
    o.sizes.statements_history_long_size = 512;
    o.sizes.transactions_history_long_size = 512;
    ASSERT_TRUE(init(o)) << last_error();
    statement_class select{"test", "select"}, insert{"test", "insert"};
    stage_class parse{"test", "parse"}, execute{"test", "execute"};
    auto work = [&](int n) {
      for (int i = 0; i < n; ++i) {
        transaction trx(i % 2 == 0, isolation::read_committed);
        statement s(i % 3 == 0 ? insert : select, "shop");
        s.text("SELECT 1");
        set_stage(parse);
        set_stage(execute);
      }
    };
    work(40);
    std::thread other([&] { work(30); });
    other.join();

    region_error err;
    auto r = reader::region_reader::open(current_region()->path(), false, err);
    ASSERT_TRUE(r) << err.message;
    for (const char* name : {"events_stages_history_long", "events_statements_history_long",
                             "events_transactions_history_long"}) {
      const reader::table_def& t = *reader::find_table(name);
      std::vector<reader::row> all;
      ASSERT_FALSE(r->scan(t, all));
      ASSERT_GT(all.size(), 60u) << name;
      const std::int64_t second_thread = all.back()[0].i;
      const std::string some_name = all.front()[3].s;

      reader::row_filter filter;
      reader::column_filter by_thread;
      by_thread.column = 0;
      by_thread.ints = {second_thread};
      filter.add(by_thread);
      reader::column_filter by_name;
      by_name.column = 3;
      by_name.text = true;
      by_name.op = reader::filter_op::in;
      by_name.texts = {some_name, "no/such/event"};
      filter.add(by_name);
      std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> expected;
      for (const auto& row : all)
        if (row[0].i == second_thread && row[3].s == some_name)
          expected.emplace_back(row[0].i, row[1].i, row[3].s);
      ASSERT_FALSE(expected.empty()) << name;

      std::vector<bool> wanted(t.columns.size(), false);
      wanted[0] = wanted[1] = wanted[3] = true;
      std::unique_ptr<bool[]> w(new bool[t.columns.size()]);
      for (std::size_t c = 0; c < t.columns.size(); ++c) w[c] = wanted[c];
      head_sink filtered;
      filtered.wanted = w.get();
      filtered.filter = &filter;
      reader::scan_cursor cursor;
      int calls = 0;
      while (!cursor.done && calls < 10000) {
        ASSERT_FALSE(r->scan(t, filtered, cursor));
        ++calls;
      }
      EXPECT_EQ(filtered.rows, expected) << name;

      head_sink pieces;  // no filter: every row, in many pieces
      pieces.wanted = w.get();
      reader::scan_cursor c2;
      int pieces_calls = 0;
      while (!c2.done && pieces_calls < 10000) {
        ASSERT_FALSE(r->scan(t, pieces, c2));
        ++pieces_calls;
      }
      EXPECT_GE(pieces_calls, 3) << name;  // a pause may come every 64 records
      ASSERT_EQ(pieces.rows.size(), all.size()) << name;
      for (std::size_t i = 0; i < all.size(); ++i)
        EXPECT_EQ(std::get<1>(pieces.rows[i]), all[i][1].i) << name << " row " << i;
    }
  });
}

}  // namespace

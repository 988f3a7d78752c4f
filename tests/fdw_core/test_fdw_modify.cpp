// The write side of the perfschema_fdw core (fdw/core_modify.cpp) through its C ABI,
// without PostgreSQL: changes are logged per transaction, applied at commit under
// the setup lock (per column, last commit wins, a duplicate or a conflicting change
// at commit fails and applies nothing), dropped by abort and by a subtransaction's
// abort, and shown to the transaction's own scans through the overlay. Regions come
// from the fixture tool (build/tools/pfs_fixture); "another session" is a change
// made directly with the agent's setup functions, as a concurrent commit would.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "agent/reader/reader.h"
#include "agent/region/setup.h"
#include "fdw/pfs_core.h"

namespace {

using pfs::reader::table_id;

int table_index(table_id id) { return static_cast<int>(id); }

// A row of core values built from column names; strings are kept alive here.
class row_builder {
 public:
  explicit row_builder(table_id t) : t_(table_index(t)), cells_(pfs_core_column_count(t_)) {
    for (auto& c : cells_) c.isnull = true;
  }
  row_builder& text(const char* column, const std::string& v) {
    strings_.push_back(std::make_unique<std::string>(v));
    PfsCoreValue& c = at(column);
    c.isnull = false;
    c.text = strings_.back()->data();
    c.len = static_cast<std::uint32_t>(v.size());
    return *this;
  }
  row_builder& integer(const char* column, std::int64_t v) {
    PfsCoreValue& c = at(column);
    c.isnull = false;
    c.value = v;
    return *this;
  }
  PfsCoreValue& at(const char* column) {
    const int c = pfs_core_column_find(t_, column);
    EXPECT_GE(c, 0) << column;
    return cells_[static_cast<std::size_t>(c)];
  }
  std::string get(const char* column) { return std::string(at(column).text, at(column).len); }
  PfsCoreValue* data() { return cells_.data(); }
  int table() const { return t_; }

 private:
  int t_;
  std::vector<PfsCoreValue> cells_;
  std::vector<std::unique_ptr<std::string>> strings_;
};

class FdwModifyTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = testing::TempDir() + "pfs_fdw_modify_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/region";
    ASSERT_TRUE(pfs_core_init());
    pfs_core_write_discard();
    fixture(path_);
  }
  void TearDown() override {
    pfs_core_write_discard();
    pfs_core_write_forget_regions();
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  void fixture(const std::string& path, const std::string& args = "") {
    const std::string cmd = std::string(PFS_BUILD_DIR) + "/tools/pfs_fixture " + args + " '" + path + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  // The rows of a table as the region holds them (what the provider sees).
  std::vector<pfs::reader::row> region_rows(table_id t, const std::string& path = "") {
    pfs::region_error e;
    auto r = pfs::reader::region_reader::open(path.empty() ? path_ : path, false, e);
    EXPECT_NE(r, nullptr) << e.message;
    std::vector<pfs::reader::row> rows;
    if (r != nullptr) {
      EXPECT_FALSE(r->scan(pfs::reader::table(t), rows));
    }
    return rows;
  }
  // Column c of the row whose first column is key.
  std::string value_of(table_id t, const std::string& key, const char* column, const std::string& path = "") {
    const int c = pfs_core_column_find(table_index(t), column);
    for (const auto& row : region_rows(t, path))
      if (row[0].s == key) return row[static_cast<std::size_t>(c)].s;
    return "<none>";
  }

  // UPDATE of an instrument's columns (as a scan would give the old row).
  bool update_instrument(const std::string& name, std::map<std::string, std::string> set, int level = 1,
                         std::uint32_t cid = 0) {
    row_builder old_row(table_id::setup_instruments), new_row(table_id::setup_instruments);
    for (const char* c : {"enabled", "timed", "trace_enabled"}) {
      const std::string v = value_of(table_id::setup_instruments, name, c);
      old_row.text(c, v);
      new_row.text(c, set.count(c) ? set[c] : v);
    }
    old_row.text("name", name);
    new_row.text("name", name);
    bool flags[64] = {};
    for (const auto& [c, v] : set) flags[pfs_core_column_find(old_row.table(), c.c_str())] = true;
    return pfs_core_write_update(path_.c_str(), old_row.table(), old_row.data(), new_row.data(), flags, level,
                                 cid, &err_);
  }

  bool insert_actor(const std::string& host, const std::string& user, int level = 1, std::uint32_t cid = 0,
                    const std::string& path = "") {
    row_builder r(table_id::setup_actors);
    r.text("host", host).text("user", user).text("role", "%");
    return pfs_core_write_insert((path.empty() ? path_ : path).c_str(), r.table(), r.data(), nullptr, false,
                                 nullptr, level, cid, &err_);
  }

  std::string dir_, path_;
  PfsCoreWriteError err_{};
};

TEST(FdwModifyRules, WhatEachTableAllows) {
  ASSERT_TRUE(pfs_core_init());
  const int instruments = table_index(table_id::setup_instruments);
  EXPECT_EQ(pfs_core_table_operations(instruments), PFS_CORE_OP_UPDATE);
  EXPECT_EQ(pfs_core_table_operations(table_index(table_id::setup_actors)),
            PFS_CORE_OP_UPDATE | PFS_CORE_OP_INSERT | PFS_CORE_OP_DELETE | PFS_CORE_OP_TRUNCATE);
  EXPECT_EQ(pfs_core_table_operations(table_index(table_id::events_waits_history_long)),
            PFS_CORE_OP_TRUNCATE);
  EXPECT_EQ(pfs_core_table_operations(table_index(table_id::mutex_instances)), 0);
  EXPECT_EQ(pfs_core_table_operations(table_index(table_id::status)), 0);
  EXPECT_EQ(pfs_core_table_operations(-1), 0);
  EXPECT_TRUE(pfs_core_column_updatable(instruments, pfs_core_column_find(instruments, "trace_enabled")));
  EXPECT_FALSE(pfs_core_column_updatable(instruments, pfs_core_column_find(instruments, "name")));
  EXPECT_TRUE(pfs_core_column_is_key(instruments, pfs_core_column_find(instruments, "name")));
  const int threads = table_index(table_id::threads);
  EXPECT_TRUE(pfs_core_column_is_key(threads, pfs_core_column_find(threads, "thread_id")));
  EXPECT_TRUE(pfs_core_column_updatable(threads, pfs_core_column_find(threads, "history")));
  EXPECT_FALSE(pfs_core_column_updatable(threads, 99));
}

TEST_F(FdwModifyTest, NothingReachesTheRegionBeforeCommit) {
  ASSERT_TRUE(update_instrument("wait/synch/mutex/app/queue_lock", {{"enabled", "no"}}))
      << err_.error.message;
  EXPECT_TRUE(pfs_core_write_pending());
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/queue_lock", "enabled"), "YES");
  ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err_)) << err_.error.message;
  EXPECT_FALSE(pfs_core_write_pending());
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/queue_lock", "enabled"), "NO");
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/queue_lock", "timed"), "YES");

  ASSERT_TRUE(update_instrument("wait/synch/mutex/app/queue_lock", {{"timed", "NO"}}));
  pfs_core_write_discard();  // rollback
  EXPECT_FALSE(pfs_core_write_pending());
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/queue_lock", "timed"), "YES");
}

TEST_F(FdwModifyTest, ValuesAreCheckedAndNormalized) {
  row_builder old_row(table_id::setup_instruments), new_row(table_id::setup_instruments);
  old_row.text("name", "wait/synch/mutex/app/queue_lock").text("enabled", "YES").text("timed", "YES");
  old_row.text("trace_enabled", "NO");
  new_row.text("name", "wait/synch/mutex/app/queue_lock").text("enabled", "nO").text("timed", "YES");
  new_row.text("trace_enabled", "NO");
  bool set[64] = {};
  set[pfs_core_column_find(old_row.table(), "enabled")] = true;
  ASSERT_TRUE(pfs_core_write_update(path_.c_str(), old_row.table(), old_row.data(), new_row.data(), set, 1, 0,
                                    &err_));
  EXPECT_TRUE(new_row.at("enabled").changed);
  EXPECT_EQ(new_row.get("enabled"), "NO");
  EXPECT_FALSE(new_row.at("timed").changed);

  new_row.text("enabled", "YESS");
  EXPECT_FALSE(pfs_core_write_update(path_.c_str(), old_row.table(), old_row.data(), new_row.data(), set, 1,
                                     0, &err_));
  EXPECT_STREQ(err_.sqlstate, "22023");
  EXPECT_STREQ(err_.error.message, "invalid value for column \"enabled\": \"YESS\"");
  new_row.at("enabled").isnull = true;
  EXPECT_FALSE(pfs_core_write_update(path_.c_str(), old_row.table(), old_row.data(), new_row.data(), set, 1,
                                     0, &err_));
  EXPECT_STREQ(err_.sqlstate, "23502");
  // a column that may not change, changed behind the SET list (a trigger)
  new_row.text("enabled", "NO").text("name", "other");
  EXPECT_FALSE(pfs_core_write_update(path_.c_str(), old_row.table(), old_row.data(), new_row.data(), set, 1,
                                     0, &err_));
  EXPECT_STREQ(err_.sqlstate, "0A000");
  // only the first update was logged
  ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err_));
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/queue_lock", "enabled"), "NO");
}

TEST_F(FdwModifyTest, LastCommitWinsPerColumn) {
  // this transaction disables; "another session" changes timed and commits first
  ASSERT_TRUE(update_instrument("wait/synch/mutex/app/cache_lock", {{"enabled", "NO"}}));
  {
    pfs::region_error e;
    auto r = pfs::reader::region_reader::open(path_, true, e);
    ASSERT_NE(r, nullptr);
    pfs::setup_lock_guard lock(r->region());
    pfs::setup::set_instrument(r->region(), r->find_class("wait/synch/mutex/app/cache_lock"), 1, 0);
  }
  ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err_)) << err_.error.message;
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/cache_lock", "enabled"), "NO");
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/cache_lock", "timed"), "NO");
}

TEST_F(FdwModifyTest, TracingRule) {
  EXPECT_FALSE(update_instrument("wait/synch/mutex/app/idle_lock", {{"trace_enabled", "YES"}}));
  EXPECT_STREQ(err_.sqlstate, "55000");
  ASSERT_TRUE(
      update_instrument("wait/synch/mutex/app/idle_lock", {{"enabled", "YES"}, {"trace_enabled", "yes"}}));
  ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err_));
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/idle_lock", "trace_enabled"), "YES");

  // traced in this transaction while another session disables the instrument
  ASSERT_TRUE(update_instrument("wait/synch/mutex/app/cache_lock", {{"trace_enabled", "YES"}}));
  {
    pfs::region_error e;
    auto r = pfs::reader::region_reader::open(path_, true, e);
    pfs::setup_lock_guard lock(r->region());
    pfs::setup::set_instrument(r->region(), r->find_class("wait/synch/mutex/app/cache_lock"), 0, -1);
  }
  ASSERT_TRUE(update_instrument("wait/synch/mutex/app/queue_lock", {{"timed", "NO"}}));
  EXPECT_FALSE(pfs_core_write_commit(nullptr, 0, &err_));
  EXPECT_STREQ(err_.sqlstate, "40001");
  pfs_core_write_discard();
  // nothing of the transaction was applied
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/queue_lock", "timed"), "YES");
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/cache_lock", "trace_enabled"), "NO");
}

TEST_F(FdwModifyTest, InsertsAreCheckedAgainstTheRegionAndTheTransaction) {
  EXPECT_FALSE(insert_actor("db1", "bob"));  // the fixture's 3 slots are taken
  EXPECT_STREQ(err_.sqlstate, "54000");
  EXPECT_STREQ(err_.error.hint, "Start the instrumented program with a larger PFS_SETUP_ACTORS_SIZE.");
  row_builder zoe(table_id::setup_actors);
  zoe.text("host", "localhost").text("user", "zo\u00eb").text("role", "\u65e5\u672c");
  ASSERT_TRUE(pfs_core_write_delete(path_.c_str(), zoe.table(), zoe.data(), 1, 0, &err_));
  ASSERT_TRUE(insert_actor("db1", "bob"));
  EXPECT_FALSE(insert_actor("db1", "bob"));
  EXPECT_STREQ(err_.sqlstate, "23505");
  EXPECT_STREQ(err_.error.detail, "Key (host, user, role)=(db1, bob, %) already exists.");
  ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err_));
  const auto rows = region_rows(table_id::setup_actors);
  ASSERT_EQ(rows.size(), 3u);
  bool bob = false;
  for (const auto& r : rows) bob |= r[1].s == "bob" && r[3].s == "YES" && r[4].s == "YES" && r[5].s == "NO";
  EXPECT_TRUE(bob);
}

// INSERT INTO setup_actors (host, "user", role, enabled) VALUES (NULL, ...): a NULL
// in a column the INSERT names is an error, as an UPDATE to NULL and as in MySQL; a
// column it leaves out takes MySQL's default.
TEST_F(FdwModifyTest, InsertOfANamedNullIsAnError) {
  row_builder zoe(table_id::setup_actors);
  zoe.text("host", "localhost").text("user", "zo\u00eb").text("role", "\u65e5\u672c");
  ASSERT_TRUE(pfs_core_write_delete(path_.c_str(), zoe.table(), zoe.data(), 1, 0, &err_));
  row_builder r(table_id::setup_actors);
  r.text("user", "bob").text("role", "%");
  bool named[64] = {};
  for (const char* c : {"host", "user", "role", "enabled"}) named[pfs_core_column_find(r.table(), c)] = true;
  EXPECT_FALSE(pfs_core_write_insert(path_.c_str(), r.table(), r.data(), named, false, nullptr, 1, 0, &err_));
  EXPECT_STREQ(err_.sqlstate, "23502");
  EXPECT_STREQ(err_.error.message,
               "null value in column \"host\" of performance_schema table \"setup_actors\" violates not-null "
               "constraint");
  EXPECT_STREQ(err_.error.hint, "Leave the column out of the INSERT to get its default, \"%\".");
  r.text("host", "db1");  // enabled still NULL, and named
  EXPECT_FALSE(pfs_core_write_insert(path_.c_str(), r.table(), r.data(), named, false, nullptr, 1, 0, &err_));
  EXPECT_STREQ(err_.sqlstate, "23502");
  EXPECT_NE(std::string(err_.error.message).find("\"enabled\""), std::string::npos) << err_.error.message;
  named[pfs_core_column_find(r.table(), "enabled")] = false;  // left out: MySQL's default
  ASSERT_TRUE(pfs_core_write_insert(path_.c_str(), r.table(), r.data(), named, false, nullptr, 1, 0, &err_))
      << err_.error.message;
  EXPECT_EQ(r.get("enabled"), "YES");
  ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err_)) << err_.error.message;
  bool bob = false;
  for (const auto& x : region_rows(table_id::setup_actors)) bob |= x[0].s == "db1" && x[1].s == "bob";
  EXPECT_TRUE(bob);
}

TEST_F(FdwModifyTest, DuplicateAtCommitAppliesNothing) {
  row_builder zoe(table_id::setup_actors);
  zoe.text("host", "localhost").text("user", "zo\u00eb").text("role", "\u65e5\u672c");
  ASSERT_TRUE(pfs_core_write_delete(path_.c_str(), zoe.table(), zoe.data(), 1, 0, &err_));
  ASSERT_TRUE(insert_actor("db1", "bob"));
  ASSERT_TRUE(update_instrument("wait/synch/mutex/app/queue_lock", {{"enabled", "NO"}}));
  {  // another session commits the same row first (into the slot of a row it deletes)
    pfs::region_error e;
    auto r = pfs::reader::region_reader::open(path_, true, e);
    pfs::setup_lock_guard lock(r->region());
    pfs::setup::delete_actor(r->region(), "localhost", "alice", "%");
    ASSERT_EQ(pfs::setup::insert_actor(r->region(), "db1", "bob", "%", false, false),
              pfs::setup::actor_result::ok);
  }
  EXPECT_FALSE(pfs_core_write_commit(nullptr, 0, &err_));
  EXPECT_STREQ(err_.sqlstate, "23505");
  pfs_core_write_discard();
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/queue_lock", "enabled"), "YES");
  EXPECT_EQ(region_rows(table_id::setup_actors).size(), 3u);  // zoë is still there
}

TEST_F(FdwModifyTest, ChangesOfRowsGoneMeanwhileDoNothing) {
  row_builder alice(table_id::setup_actors);
  alice.text("host", "localhost").text("user", "alice").text("role", "%").text("enabled", "YES");
  alice.text("history", "NO").text("trace_enabled", "NO");
  row_builder changed(table_id::setup_actors);
  changed.text("host", "localhost").text("user", "alice").text("role", "%").text("enabled", "NO");
  changed.text("history", "NO").text("trace_enabled", "NO");
  bool set[64] = {};
  set[pfs_core_column_find(alice.table(), "enabled")] = true;
  ASSERT_TRUE(
      pfs_core_write_update(path_.c_str(), alice.table(), alice.data(), changed.data(), set, 1, 0, &err_));
  row_builder thread(table_id::threads);
  thread.integer("thread_id", 77).text("instrumented", "YES").text("history", "YES");
  row_builder thread_new(table_id::threads);
  thread_new.integer("thread_id", 77).text("instrumented", "NO").text("history", "YES");
  bool tset[64] = {};
  tset[pfs_core_column_find(thread.table(), "instrumented")] = true;
  ASSERT_TRUE(pfs_core_write_update(path_.c_str(), thread.table(), thread.data(), thread_new.data(), tset, 1,
                                    0, &err_));
  {
    pfs::region_error e;
    auto r = pfs::reader::region_reader::open(path_, true, e);
    pfs::setup_lock_guard lock(r->region());
    pfs::setup::delete_actor(r->region(), "localhost", "alice", "%");
  }
  ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err_)) << err_.error.message;
  EXPECT_EQ(region_rows(table_id::setup_actors).size(), 2u);
}

TEST_F(FdwModifyTest, SubtransactionsKeepOrDropTheirChanges) {
  ASSERT_TRUE(update_instrument("wait/synch/mutex/app/queue_lock", {{"enabled", "NO"}}, 1));
  ASSERT_TRUE(update_instrument("wait/synch/mutex/app/cache_lock", {{"enabled", "NO"}}, 2));
  ASSERT_TRUE(update_instrument("wait/synch/rwlock/app/cache_rw", {{"enabled", "NO"}}, 3));
  pfs_core_write_subxact_end(3, false);  // ROLLBACK TO the savepoint of level 3
  pfs_core_write_subxact_end(2, true);   // RELEASE: level 2's changes go to level 1
  ASSERT_TRUE(update_instrument("wait/synch/cond/app/queue_not_empty", {{"enabled", "NO"}}, 2));
  pfs_core_write_subxact_end(2, false);
  ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err_));
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/queue_lock", "enabled"), "NO");
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/cache_lock", "enabled"), "NO");
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/rwlock/app/cache_rw", "enabled"), "YES");
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/cond/app/queue_not_empty", "enabled"), "YES");
}

TEST_F(FdwModifyTest, OverlayShowsEarlierCommandsOnly) {
  const int actors = table_index(table_id::setup_actors);
  row_builder zoe(table_id::setup_actors);
  zoe.text("host", "localhost").text("user", "zo\u00eb").text("role", "\u65e5\u672c");
  ASSERT_TRUE(pfs_core_write_delete(path_.c_str(), actors, zoe.data(), 1, 0, &err_));
  ASSERT_TRUE(insert_actor("db1", "bob", 1, 1));
  ASSERT_TRUE(update_instrument("wait/synch/mutex/app/queue_lock", {{"timed", "NO"}}, 1, 1));

  // a scan of command 1 sees command 0's delete, not command 1's insert
  PfsCoreOverlay* o = pfs_core_overlay_begin(path_.c_str(), actors, 1, &err_);
  ASSERT_NE(o, nullptr);
  row_builder base(table_id::setup_actors);
  base.text("host", "localhost").text("user", "zo\u00eb").text("role", "\u65e5\u672c").text("enabled", "NO");
  EXPECT_EQ(pfs_core_overlay_row(o, base.data()), -1);
  row_builder other(table_id::setup_actors);
  other.text("host", "%").text("user", "%").text("role", "%").text("enabled", "YES");
  EXPECT_EQ(pfs_core_overlay_row(o, other.data()), 0);
  row_builder extra(table_id::setup_actors);
  EXPECT_FALSE(pfs_core_overlay_extra(o, extra.data()));
  pfs_core_overlay_free(o);

  // command 2 sees the inserted row as an extra row, once per pass
  o = pfs_core_overlay_begin(path_.c_str(), actors, 2, &err_);
  ASSERT_NE(o, nullptr);
  ASSERT_TRUE(pfs_core_overlay_extra(o, extra.data()));
  EXPECT_EQ(extra.get("user"), "bob");
  EXPECT_EQ(extra.get("enabled"), "YES");
  EXPECT_FALSE(pfs_core_overlay_extra(o, extra.data()));
  pfs_core_overlay_rewind(o);
  EXPECT_TRUE(pfs_core_overlay_extra(o, extra.data()));
  pfs_core_overlay_free(o);

  // another table of the region, another region: nothing to apply
  EXPECT_EQ(pfs_core_overlay_begin(path_.c_str(), table_index(table_id::threads), 9, &err_), nullptr);
  EXPECT_EQ(err_.error.kind, PFS_CORE_OK);
  EXPECT_EQ(pfs_core_overlay_begin("/elsewhere", actors, 9, &err_), nullptr);

  // an updated row gets its new values
  const int instruments = table_index(table_id::setup_instruments);
  o = pfs_core_overlay_begin(path_.c_str(), instruments, 2, &err_);
  ASSERT_NE(o, nullptr);
  row_builder q(table_id::setup_instruments);
  q.text("name", "wait/synch/mutex/app/queue_lock").text("enabled", "YES").text("timed", "YES");
  EXPECT_EQ(pfs_core_overlay_row(o, q.data()), 1);
  EXPECT_EQ(q.get("timed"), "NO");
  EXPECT_TRUE(q.at("timed").changed);
  EXPECT_FALSE(q.at("enabled").changed);
  pfs_core_overlay_free(o);
}

TEST_F(FdwModifyTest, TruncateAtCommit) {
  const int history = table_index(table_id::events_waits_history);
  const int global = table_index(table_id::events_waits_summary_global_by_event_name);
  ASSERT_TRUE(pfs_core_write_truncate(path_.c_str(), history, 1, 0, &err_));
  ASSERT_TRUE(
      pfs_core_write_truncate(path_.c_str(), table_index(table_id::file_summary_by_instance), 1, 0, &err_));
  EXPECT_FALSE(pfs_core_write_truncate(path_.c_str(), table_index(table_id::threads), 1, 0, &err_));
  EXPECT_EQ(region_rows(table_id::events_waits_history).size(), 7u);

  // the overlay: history hidden, the file row of the global summary zeroed
  PfsCoreOverlay* o = pfs_core_overlay_begin(path_.c_str(), history, 1, &err_);
  ASSERT_NE(o, nullptr);
  row_builder h(table_id::events_waits_history);
  h.integer("thread_id", 1).integer("event_id", 1);
  EXPECT_EQ(pfs_core_overlay_row(o, h.data()), -1);
  pfs_core_overlay_free(o);
  o = pfs_core_overlay_begin(path_.c_str(), global, 1, &err_);
  ASSERT_NE(o, nullptr);
  row_builder file_row(table_id::events_waits_summary_global_by_event_name);
  file_row.text("event_name", "wait/io/file/app/log").integer("count_star", 10).integer("sum_timer_wait", 5);
  EXPECT_EQ(pfs_core_overlay_row(o, file_row.data()), 1);
  EXPECT_EQ(file_row.at("count_star").value, 0);
  row_builder mutex_row(table_id::events_waits_summary_global_by_event_name);
  mutex_row.text("event_name", "wait/synch/mutex/app/queue_lock").integer("count_star", 5);
  EXPECT_EQ(pfs_core_overlay_row(o, mutex_row.data()), 0);
  pfs_core_overlay_free(o);

  ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err_));
  EXPECT_EQ(region_rows(table_id::events_waits_history).size(), 0u);
  for (const auto& r : region_rows(table_id::file_summary_by_instance)) EXPECT_EQ(r[3].i, 0);
}

TEST_F(FdwModifyTest, OneCommitOverTwoRegions) {
  // a change in each region; the second cannot be applied at commit: neither is
  const std::string second = dir_ + "/second";
  fixture(second);
  ASSERT_TRUE(update_instrument("wait/synch/mutex/app/queue_lock", {{"enabled", "NO"}}));
  row_builder zoe(table_id::setup_actors);
  zoe.text("host", "localhost").text("user", "zo\u00eb").text("role", "\u65e5\u672c");
  ASSERT_TRUE(pfs_core_write_delete(second.c_str(), zoe.table(), zoe.data(), 1, 0, &err_));
  ASSERT_TRUE(insert_actor("db1", "bob", 1, 0, second)) << err_.error.message;
  {  // another session deletes zoë too and takes the free slot
    pfs::region_error e;
    auto r = pfs::reader::region_reader::open(second, true, e);
    pfs::setup_lock_guard lock(r->region());
    pfs::setup::delete_actor(r->region(), "localhost", "zo\u00eb", "\u65e5\u672c");
    ASSERT_EQ(pfs::setup::insert_actor(r->region(), "db9", "eve", "%", true, true),
              pfs::setup::actor_result::ok);
  }
  EXPECT_FALSE(pfs_core_write_commit(nullptr, 0, &err_));
  EXPECT_STREQ(err_.sqlstate, "54000");
  pfs_core_write_discard();
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/queue_lock", "enabled"), "YES");

  // both valid: both applied
  ASSERT_TRUE(update_instrument("wait/synch/mutex/app/queue_lock", {{"enabled", "NO"}}));
  ASSERT_TRUE(pfs_core_write_truncate(second.c_str(), table_index(table_id::setup_actors), 1, 0, &err_));
  ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err_)) << err_.error.message;
  EXPECT_EQ(value_of(table_id::setup_instruments, "wait/synch/mutex/app/queue_lock", "enabled"), "NO");
  EXPECT_EQ(region_rows(table_id::setup_actors, second).size(), 0u);
}

TEST_F(FdwModifyTest, ReadOnlyRegion) {
  // A region this process may read and not write (as root: checked by a child that
  // runs as nobody).
  ASSERT_EQ(chmod(path_.c_str(), 0644), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    PfsCoreWriteError err{};
    if (pfs_core_write_check(path_.c_str(), &err)) _exit(4);
    if (std::strcmp(err.sqlstate, "42501") != 0) _exit(5);
    if (std::string(err.error.message) != "region file \"" + path_ + "\" is read-only") _exit(6);
    if (std::string(err.error.detail).find("mode 0644") == std::string::npos) _exit(7);
    if (std::string(err.error.hint).find("PFS_REGION_MODE") == std::string::npos) _exit(8);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Through a server that reads a directory: a change goes to the region of its row's
// process_id, an INSERT naming no process to every region, all of them at commit;
// a region removed before commit fails the commit and the others keep their setup.
TEST_F(FdwModifyTest, DirectoryChangesGoToTheRowsRegions) {
  const std::string regions = dir_ + "/regions";
  ASSERT_EQ(mkdir(regions.c_str(), 0755), 0);
  const std::string a = regions + "/a.pfs", b = regions + "/b.pfs";
  fixture(a, "--pid=101");
  fixture(b, "--pid=102");
  const std::string lock = "wait/synch/mutex/app/queue_lock";

  // UPDATE of process 102's row: 102 only.
  row_builder old_row(table_id::setup_instruments), new_row(table_id::setup_instruments);
  for (row_builder* r : {&old_row, &new_row})
    r->text("name", lock).text("timed", "YES").text("trace_enabled", "NO").integer("process_id", 102);
  old_row.text("enabled", "YES");
  new_row.text("enabled", "NO");
  bool flags[64] = {};
  flags[pfs_core_column_find(old_row.table(), "enabled")] = true;
  ASSERT_TRUE(pfs_core_write_update(regions.c_str(), old_row.table(), old_row.data(), new_row.data(), flags,
                                    1, 0, &err_))
      << err_.error.message;
  // TRUNCATE, then an INSERT naming no process: every region.
  ASSERT_TRUE(pfs_core_write_truncate(regions.c_str(), table_index(table_id::setup_actors), 1, 1, &err_))
      << err_.error.message;
  row_builder actor(table_id::setup_actors);
  actor.text("host", "db9").text("user", "carol").text("role", "%");
  bool skipped = true;
  ASSERT_TRUE(pfs_core_write_insert(regions.c_str(), actor.table(), actor.data(), nullptr, false, &skipped, 1,
                                    2, &err_))
      << err_.error.message;
  EXPECT_FALSE(skipped);
  // A process the directory does not have: an error naming it.
  row_builder stranger(table_id::setup_actors);
  stranger.text("host", "db9").text("user", "dave").text("role", "%").integer("process_id", 999);
  EXPECT_FALSE(pfs_core_write_insert(regions.c_str(), stranger.table(), stranger.data(), nullptr, false,
                                     nullptr, 1, 3, &err_));
  EXPECT_NE(std::strstr(err_.error.message, "no region of process 999"), nullptr) << err_.error.message;
  // Changing where a row comes from: refused.
  new_row.integer("process_id", 101);
  EXPECT_FALSE(pfs_core_write_update(regions.c_str(), old_row.table(), old_row.data(), new_row.data(), flags,
                                     1, 4, &err_));
  EXPECT_STREQ(err_.sqlstate, "0A000");

  ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err_)) << err_.error.message;
  EXPECT_EQ(value_of(table_id::setup_instruments, lock, "enabled", a), "YES");
  EXPECT_EQ(value_of(table_id::setup_instruments, lock, "enabled", b), "NO");
  for (const std::string& path : {a, b}) {
    const auto actors = region_rows(table_id::setup_actors, path);
    ASSERT_EQ(actors.size(), 1u) << path;
    EXPECT_EQ(actors[0][1].s, "carol");
  }

  // All or none: b removed before commit.
  old_row.text("enabled", "YES").integer("process_id", 101);
  new_row.text("enabled", "NO").integer("process_id", 101);
  ASSERT_TRUE(pfs_core_write_update(regions.c_str(), old_row.table(), old_row.data(), new_row.data(), flags,
                                    1, 5, &err_));
  ASSERT_TRUE(
      pfs_core_write_truncate(regions.c_str(), table_index(table_id::events_waits_history_long), 1, 6, &err_))
      << err_.error.message;
  ASSERT_EQ(unlink(b.c_str()), 0);
  EXPECT_FALSE(pfs_core_write_commit(nullptr, 0, &err_));
  pfs_core_write_discard();
  EXPECT_EQ(value_of(table_id::setup_instruments, lock, "enabled", a), "YES");
  EXPECT_FALSE(region_rows(table_id::events_waits_history_long, a).empty());
}

}  // namespace

// The table registry: every table declared once, in table_id order — its name and
// columns (MySQL's names and order, in lower case), the row builder that makes its
// rows (rows_*.cpp), its row estimate, what SQL may change in it, and the variable
// that sizes it. The reader's dispatch, IMPORT FOREIGN SCHEMA, the FDW's write
// validation and docs/tables.md's table list (checked by tests/reader/test_tables.cpp) all
// follow from here: adding a table is its table_id, one entry here naming its row
// builder, and that builder (docs/tables.md, "Adding a table"); adding a column is
// one edit here and one cell in its builder.
#include <algorithm>

#include "agent/reader/internal/reader_internal.h"
#include "agent/reader/internal/table_columns.h"
#include "agent/region/account_layout.h"

namespace pfs::reader::detail {
namespace {

using namespace table_columns;  // NOLINT: the registry reads as a list of columns

using impl = region_reader::impl;

// Expected rows (region_reader::expected_rows) of tables whose rows grow as the
// program runs, below their bound: per thread used so far...
std::uint64_t per_used_thread(const impl& r, std::uint64_t bound) {
  const std::uint64_t next_thread = load_relaxed(r.header().next_thread_id);
  const std::uint64_t threads_used = std::min(r.threads, next_thread > 0 ? next_thread - 1 : 0);
  return r.threads == 0 ? 0 : bound / r.threads * threads_used;
}
// ... or per history_long slot claimed so far.
std::uint64_t waits_long_used(const impl& r, std::uint64_t bound) {
  return std::min(bound, load_relaxed(r.header().history_long_next_batch) * r.history_long_batch);
}
std::uint64_t stages_long_used(const impl& r, std::uint64_t bound) {
  return std::min(bound, load_relaxed(r.header().stages_long_next));
}
std::uint64_t statements_long_used(const impl& r, std::uint64_t bound) {
  return std::min(bound, load_relaxed(r.header().statements_long_next));
}
std::uint64_t transactions_long_used(const impl& r, std::uint64_t bound) {
  return std::min(bound, load_relaxed(r.header().transactions_long_next));
}

constexpr unsigned kKeyed = kWriteUpdate;
constexpr unsigned kEditable = kWriteUpdate | kWriteInsert | kWriteDelete | kWriteTruncate;

// Setup tables: which columns identify a row and which UPDATE may set.
write_rules keyed(std::initializer_list<const char*> keys, std::initializer_list<const char*> updatable) {
  write_rules w;
  w.ops = kKeyed;
  std::copy(keys.begin(), keys.end(), w.keys);
  std::copy(updatable.begin(), updatable.end(), w.updatable);
  return w;
}
write_rules editable(std::initializer_list<const char*> keys, std::initializer_list<const char*> updatable,
                     std::uint64_t truncate, const char* size_variable) {
  write_rules w = keyed(keys, updatable);
  w.ops = kEditable;
  w.truncate = truncate;  // a keyed table's own changes are replayed by key, not as effects
  w.size_variable = size_variable;
  return w;
}
// Event and summary tables: TRUNCATE only. seen: the effects (this table's own and
// others') that change what a scan of it shows; seen_file_rows: those of them that
// touch only its wait/io/file rows.
write_rules truncatable(std::uint64_t truncate, std::uint64_t seen,
                        std::uint64_t seen_file_rows = kNoEffect) {
  write_rules w;
  w.ops = kWriteTruncate;
  w.truncate = truncate;
  w.seen = seen;
  w.seen_file_rows = seen_file_rows;
  return w;
}

}  // namespace

// Writable columns: what their values may be, and MySQL's default on INSERT.
constexpr column_rule kColumnRules[] = {
    {"enabled", value_domain::yes_no, "YES", 0},
    {"timed", value_domain::yes_no, "YES", 0},
    {"history", value_domain::yes_no, "YES", 0},
    {"instrumented", value_domain::yes_no, "YES", 0},
    {"trace_enabled", value_domain::yes_no, "NO", 0},
    {"timer_name", value_domain::timer_name, nullptr, 0},
    {"object_type", value_domain::object_type, "TABLE", 0},
    {"host", value_domain::key_text, "%", kHostLen - 1},
    {"user", value_domain::key_text, "%", kUserLen - 1},
    {"role", value_domain::key_text, "%", kUserLen - 1},
    {"object_schema", value_domain::key_text, "%", kObjectSchemaLen - 1},
    {"object_name", value_domain::key_text, "%", kTableNameLen - 1},
    {"frequency", value_domain::meter_frequency, nullptr, 0},
};

const column_rule* column_rule_of(std::string_view name) noexcept {
  for (const column_rule& r : kColumnRules)
    if (name == r.name) return &r;
  return nullptr;
}

const std::vector<table_entry>& registry() noexcept {
  static const std::vector<table_entry> all = [] {
    std::vector<table_entry> t;
    auto add = [&t](table_id id, const char* name, std::vector<column_def> columns, const char* size_variable,
                    row_builder_fn rows, estimate_fn estimate, write_rules writes = {},
                    expected_fn expected = nullptr) {
      t.push_back({table_def{name, std::move(columns), static_cast<std::uint32_t>(id), size_variable, writes},
                   rows, estimate, expected});
    };
    // clang-format off
    add(table_id::setup_instruments, "setup_instruments",
        {T("name"), T("enabled"), T("timed", true), T("trace_enabled")}, "PFS_MAX_CLASSES",
        rows_setup_instruments,
        [](const impl& r) { return r.classes; },
        keyed({"name"}, {"enabled", "timed", "trace_enabled"}));
    add(table_id::setup_consumers, "setup_consumers", {T("name"), T("enabled")}, nullptr,
        rows_setup_consumers,
        [](const impl&) { return std::uint64_t{kConsumerCount}; },
        keyed({"name"}, {"enabled"}));
    add(table_id::setup_timers, "setup_timers", {T("name"), T("timer_name", true)}, nullptr,
        rows_setup_timers,
        [](const impl&) { return std::uint64_t{5}; },
        keyed({"name"}, {"timer_name"}));
    add(table_id::setup_actors, "setup_actors",
        {T("host"), T("user"), T("role"), T("enabled"), T("history"), T("trace_enabled")}, "PFS_SETUP_ACTORS_SIZE",
        rows_setup_actors,
        [](const impl& r) { return r.count(kArraySetupActors); },
        editable({"host", "user", "role"}, {"enabled", "history", "trace_enabled"}, kEmptyActors,
                 "PFS_SETUP_ACTORS_SIZE"));
    add(table_id::performance_timers, "performance_timers",
        {T("timer_name"), I("timer_frequency", true), I("timer_resolution", true), I("timer_overhead", true)},
        nullptr,
        rows_performance_timers,
        [](const impl&) { return std::uint64_t{timers::timer_kind_count - 1}; });
    add(table_id::threads, "threads",
        {I("thread_id"), T("name"), T("type"), I("processlist_id", true), T("processlist_user", true),
         T("processlist_host", true), T("processlist_db", true), T("processlist_command", true),
         I("processlist_time", true), T("processlist_state", true), T("processlist_info", true),
         I("parent_thread_id", true), T("role", true), T("instrumented"), T("history"),
         T("connection_type", true), I("thread_os_id", true), T("resource_group", true),
         T("execution_engine", true), I("controlled_memory"), I("max_controlled_memory"), I("total_memory"),
         I("max_total_memory"),
         // not MySQL's: the name the thread gave itself (register_thread's thread_name)
         T("thread_name", true)},
        "PFS_MAX_THREADS",
        rows_threads,
        [](const impl& r) { return r.threads; },
        keyed({"thread_id"}, {"instrumented", "history"}),
        per_used_thread);
    add(table_id::events_waits_current, "events_waits_current", wait_columns(), "PFS_WAITS_STACK_DEPTH",
        [](scan_state& s) { rows_waits(s, history_kind::current); },
        [](const impl& r) { return r.count(kArrayWaitStacks); },
        truncatable(kHideCurrent, kHideCurrent),
        per_used_thread);
    add(table_id::events_waits_history, "events_waits_history", wait_columns(), "PFS_WAITS_HISTORY_SIZE",
        [](scan_state& s) { rows_waits(s, history_kind::history); },
        [](const impl& r) { return r.count(kArrayWaitHistory); },
        truncatable(kHideHistory, kHideHistory),
        per_used_thread);
    add(table_id::events_waits_history_long, "events_waits_history_long", wait_columns(),
        "PFS_WAITS_HISTORY_LONG_SIZE",
        [](scan_state& s) { rows_waits(s, history_kind::history_long); },
        [](const impl& r) { return r.count(kArrayHistoryLong); },
        truncatable(kHideHistoryLong, kHideHistoryLong),
        waits_long_used);
    // Beyond MySQL: quantile_95, quantile_99, quantile_999 from the class's histogram.
    add(table_id::events_waits_summary_global_by_event_name, "events_waits_summary_global_by_event_name",
        [] { auto c = with_stats({T("event_name")});
             for (const char* n : {"quantile_95", "quantile_99", "quantile_999"}) c.push_back(I(n));
             return c; }(), "PFS_MAX_CLASSES",
        rows_waits_summary_global,
        [](const impl& r) { return r.classes; },
        truncatable(kResetWait, kResetWait | kResetFile | kResetSocket | kResetWaitHistograms,
                    kResetFile | kResetSocket));
    add(table_id::events_waits_summary_by_thread_by_event_name, "events_waits_summary_by_thread_by_event_name",
        with_stats({I("thread_id"), T("event_name")}), "PFS_MAX_THREADS, PFS_MAX_CLASSES",
        rows_waits_summary_by_thread,
        [](const impl& r) { return r.count(kArrayThreadClassStats); },
        truncatable(kResetThread, kResetThread | kResetWaitsByAccount | kResetWaitsByUser | kResetWaitsByHost),
        per_used_thread);
    add(table_id::events_waits_summary_by_instance, "events_waits_summary_by_instance",
        with_stats({T("event_name"), I("object_instance_begin")}),
        "PFS_MAX_MUTEXES, PFS_MAX_RWLOCKS, PFS_MAX_CONDS, PFS_MAX_SEMS, PFS_MAX_FILES, PFS_MAX_SOCKETS",
        rows_waits_summary_by_instance,
        [](const impl& r) {
          return r.count(kArrayMutexes) + r.count(kArrayRwlocks) + r.count(kArrayConds) + r.count(kArraySems) +
                 r.count(kArrayFiles) + r.count(kArraySockets);
        },
        truncatable(kResetWait, kResetWait | kResetFile | kResetSocket, kResetFile | kResetSocket));
    add(table_id::mutex_instances, "mutex_instances",
        {T("name"), I("object_instance_begin"), I("locked_by_thread_id", true)}, "PFS_MAX_MUTEXES",
        [](scan_state& s) { rows_sync_instances(s, kArrayMutexes); },
        [](const impl& r) { return r.count(kArrayMutexes); });
    add(table_id::rwlock_instances, "rwlock_instances",
        {T("name"), I("object_instance_begin"), I("write_locked_by_thread_id", true), I("read_locked_by_count")},
        "PFS_MAX_RWLOCKS",
        [](scan_state& s) { rows_sync_instances(s, kArrayRwlocks); },
        [](const impl& r) { return r.count(kArrayRwlocks); });
    add(table_id::cond_instances, "cond_instances", {T("name"), I("object_instance_begin")}, "PFS_MAX_CONDS",
        [](scan_state& s) { rows_sync_instances(s, kArrayConds); },
        [](const impl& r) { return r.count(kArrayConds); });
    add(table_id::status, "status", {T("variable_name"), I("variable_value")}, nullptr,
        rows_status,
        [](const impl&) { return kStatusRows; });
    add(table_id::setup_objects, "setup_objects",
        {T("object_type"), T("object_schema"), T("object_name"), T("enabled"), T("timed")},
        "PFS_SETUP_OBJECTS_SIZE",
        rows_setup_objects,
        [](const impl& r) { return r.count(kArraySetupObjects); },
        editable({"object_type", "object_schema", "object_name"}, {"enabled", "timed"}, kEmptyObjects,
                 "PFS_SETUP_OBJECTS_SIZE"));
    add(table_id::file_instances, "file_instances", {T("file_name"), T("event_name"), I("open_count")},
        "PFS_MAX_FILES",
        rows_file_instances,
        [](const impl& r) { return r.count(kArrayFiles); });
    add(table_id::file_summary_by_event_name, "file_summary_by_event_name", with_file_groups({T("event_name")}),
        "PFS_MAX_CLASSES",
        rows_file_summary_by_event_name,
        [](const impl& r) { return r.classes; },
        truncatable(kResetFile, kResetWait | kResetFile));
    add(table_id::file_summary_by_instance, "file_summary_by_instance",
        with_file_groups({T("file_name"), T("event_name"), I("object_instance_begin")}), "PFS_MAX_FILES",
        rows_file_summary_by_instance,
        [](const impl& r) { return r.count(kArrayFiles); },
        truncatable(kResetFile, kResetWait | kResetFile));
    add(table_id::table_io_waits_summary_by_table, "table_io_waits_summary_by_table",
        with_table_groups({T("object_type"), T("object_schema"), T("object_name")}), "PFS_MAX_TABLES",
        rows_table_io_by_table,
        [](const impl& r) { return r.count(kArrayTables); },
        truncatable(kResetTable, kResetWait | kResetTable));
    // One row per declared index (at most max_indexes_per_table) + one per table.
    add(table_id::table_io_waits_summary_by_index_usage, "table_io_waits_summary_by_index_usage",
        with_table_groups({T("object_type"), T("object_schema"), T("object_name"), T("index_name", true)}),
        "PFS_MAX_TABLES, PFS_MAX_INDEXES_PER_TABLE",
        rows_table_io_by_index_usage,
        [](const impl& r) { return r.count(kArrayTables) + r.count(kArrayTableIndexes); },
        truncatable(kResetTable, kResetWait | kResetTable));
    add(table_id::events_stages_current, "events_stages_current", stage_columns(), "PFS_MAX_THREADS",
        [](scan_state& s) { rows_stages(s, history_kind::current); },
        [](const impl& r) { return r.count(kArrayStageCurrent); },
        truncatable(kHideStages, kHideStages),
        per_used_thread);
    add(table_id::events_stages_history, "events_stages_history", stage_columns(), "PFS_STAGES_HISTORY_SIZE",
        [](scan_state& s) { rows_stages(s, history_kind::history); },
        [](const impl& r) { return r.count(kArrayStageHistory); },
        truncatable(kHideStagesHistory, kHideStagesHistory),
        per_used_thread);
    add(table_id::events_stages_history_long, "events_stages_history_long", stage_columns(),
        "PFS_STAGES_HISTORY_LONG_SIZE",
        [](scan_state& s) { rows_stages(s, history_kind::history_long); },
        [](const impl& r) { return r.count(kArrayStageHistoryLong); },
        truncatable(kHideStagesHistoryLong, kHideStagesHistoryLong),
        stages_long_used);
    add(table_id::events_statements_current, "events_statements_current", statement_columns(),
        "PFS_STATEMENT_STACK_DEPTH, PFS_MAX_SQL_TEXT_LENGTH",
        [](scan_state& s) { rows_statements(s, history_kind::current); },
        [](const impl& r) { return r.count(kArrayStatementCurrent); },
        truncatable(kHideStatements, kHideStatements),
        per_used_thread);
    add(table_id::events_statements_history, "events_statements_history", statement_columns(),
        "PFS_STATEMENTS_HISTORY_SIZE, PFS_MAX_SQL_TEXT_LENGTH",
        [](scan_state& s) { rows_statements(s, history_kind::history); },
        [](const impl& r) { return r.count(kArrayStatementHistory); },
        truncatable(kHideStatementsHistory, kHideStatementsHistory),
        per_used_thread);
    add(table_id::events_statements_history_long, "events_statements_history_long", statement_columns(),
        "PFS_STATEMENTS_HISTORY_LONG_SIZE, PFS_MAX_SQL_TEXT_LENGTH",
        [](scan_state& s) { rows_statements(s, history_kind::history_long); },
        [](const impl& r) { return r.count(kArrayStatementHistoryLong); },
        truncatable(kHideStatementsHistoryLong, kHideStatementsHistoryLong),
        statements_long_used);
    add(table_id::events_transactions_current, "events_transactions_current", transaction_columns(),
        "PFS_MAX_THREADS",
        [](scan_state& s) { rows_transactions(s, history_kind::current); },
        [](const impl& r) { return r.count(kArrayTransactionCurrent); },
        truncatable(kHideTransactions, kHideTransactions),
        per_used_thread);
    add(table_id::events_transactions_history, "events_transactions_history", transaction_columns(),
        "PFS_TRANSACTIONS_HISTORY_SIZE",
        [](scan_state& s) { rows_transactions(s, history_kind::history); },
        [](const impl& r) { return r.count(kArrayTransactionHistory); },
        truncatable(kHideTransactionsHistory, kHideTransactionsHistory),
        per_used_thread);
    add(table_id::events_transactions_history_long, "events_transactions_history_long", transaction_columns(),
        "PFS_TRANSACTIONS_HISTORY_LONG_SIZE",
        [](scan_state& s) { rows_transactions(s, history_kind::history_long); },
        [](const impl& r) { return r.count(kArrayTransactionHistoryLong); },
        truncatable(kHideTransactionsHistoryLong, kHideTransactionsHistoryLong),
        transactions_long_used);
    add(table_id::events_stages_summary_by_thread_by_event_name, "events_stages_summary_by_thread_by_event_name",
        with_stats({I("thread_id"), T("event_name")}), "PFS_MAX_THREADS, PFS_MAX_STAGE_CLASSES",
        [](scan_state& s) { rows_stage_summaries(s, summary_kind::by_thread); },
        [](const impl& r) { return r.count(kArrayThreadStageStats); },
        truncatable(kResetStagesByThread, kResetStagesByThread | kResetStages | kResetStagesByAccount |
                                            kResetStagesByUser | kResetStagesByHost),
        per_used_thread);
    add(table_id::events_stages_summary_global_by_event_name, "events_stages_summary_global_by_event_name",
        with_stats({T("event_name")}), "PFS_MAX_STAGE_CLASSES",
        [](scan_state& s) { rows_stage_summaries(s, summary_kind::global); },
        [](const impl& r) { return r.count(kArrayClassStageStats); },
        truncatable(kResetStages, kResetStages));
    add(table_id::events_statements_summary_by_thread_by_event_name,
        "events_statements_summary_by_thread_by_event_name", with_statement_stats({I("thread_id"), T("event_name")}),
        "PFS_MAX_THREADS, PFS_MAX_STATEMENT_CLASSES",
        [](scan_state& s) { rows_statement_summaries(s, summary_kind::by_thread); },
        [](const impl& r) { return r.count(kArrayThreadStatementStats); },
        truncatable(kResetStatementsByThread, kResetStatementsByThread | kResetStatements | kResetStatementsByAccount |
                                            kResetStatementsByUser | kResetStatementsByHost),
        per_used_thread);
    add(table_id::events_statements_summary_global_by_event_name,
        "events_statements_summary_global_by_event_name", with_statement_stats({T("event_name")}),
        "PFS_MAX_STATEMENT_CLASSES",
        [](scan_state& s) { rows_statement_summaries(s, summary_kind::global); },
        [](const impl& r) { return r.count(kArrayClassStatementStats); },
        truncatable(kResetStatements, kResetStatements));
    add(table_id::events_statements_summary_by_digest, "events_statements_summary_by_digest",
        [] { auto c = with_statement_stats({T("schema_name", true), T("digest", true), T("digest_text", true)});
             for (const column_def& d : {TS("first_seen"), TS("last_seen"), I("quantile_95"), I("quantile_99"),
                                         I("quantile_999"), T("query_sample_text", true), TS("query_sample_seen"),
                                         I("query_sample_timer_wait")})
               c.push_back(d);
             return c; }(),
        "PFS_DIGESTS_SIZE",
        rows_digests,
        [](const impl& r) { return r.count(kArrayDigests); },
        truncatable(kResetDigests, kResetDigests | kResetDigestHistograms));
    add(table_id::events_transactions_summary_by_thread_by_event_name,
        "events_transactions_summary_by_thread_by_event_name",
        with_transaction_stats({I("thread_id"), T("event_name")}), "PFS_MAX_THREADS",
        [](scan_state& s) { rows_transaction_summaries(s, summary_kind::by_thread); },
        [](const impl& r) { return r.count(kArrayThreadTransactionStats); },
        truncatable(kResetTransactionsByThread, kResetTransactionsByThread | kResetTransactions | kResetTransactionsByAccount |
                                            kResetTransactionsByUser | kResetTransactionsByHost),
        per_used_thread);
    add(table_id::events_transactions_summary_global_by_event_name,
        "events_transactions_summary_global_by_event_name", with_transaction_stats({T("event_name")}), nullptr,
        [](scan_state& s) { rows_transaction_summaries(s, summary_kind::global); },
        [](const impl&) { return std::uint64_t{1}; },
        truncatable(kResetTransactions, kResetTransactions));
    add(table_id::events_statements_histogram_global, "events_statements_histogram_global", with_buckets({}),
        nullptr,
        rows_statement_histogram_global,
        [](const impl&) { return std::uint64_t{kHistogramBuckets}; },
        truncatable(kResetStatementHistogram, kResetStatementHistogram));
    add(table_id::events_statements_histogram_by_digest, "events_statements_histogram_by_digest",
        with_buckets({T("schema_name", true), T("digest", true)}), "PFS_DIGESTS_SIZE",
        rows_statement_histogram_by_digest,
        [](const impl& r) { return r.count(kArrayDigests) * kHistogramBuckets; },
        truncatable(kResetDigestHistograms, kResetDigestHistograms | kResetDigests));
    // Beyond MySQL (which has histograms for statements only): every wait class.
    add(table_id::events_waits_histogram_global_by_event_name, "events_waits_histogram_global_by_event_name",
        with_buckets({T("event_name")}), "PFS_MAX_CLASSES, PFS_WAIT_HISTOGRAMS",
        rows_wait_histograms,
        [](const impl& r) { return r.classes * kWaitHistogramBuckets; },
        truncatable(kResetWaitHistograms, kResetWaitHistograms | kResetWait));
    // Beyond MySQL: the contended waits of each lock instance by the SOURCE of the
    // holder's acquisition (NULL: the holder was not known, e.g. readers).
    add(table_id::lock_contention_by_instance, "lock_contention_by_instance",
        with_stats({T("event_name"), I("object_instance_begin"), T("blocking_source", true)}),
        "PFS_LOCK_CONTENTION_SIZE",
        rows_lock_contention,
        [](const impl& r) { return r.count(kArrayLockContention); },
        truncatable(kResetLockContention, kResetLockContention));
    add(table_id::socket_instances, "socket_instances",
        {T("event_name"), I("object_instance_begin"), I("thread_id", true), I("socket_id"), T("ip"), I("port"),
         T("state")},
        "PFS_MAX_SOCKETS",
        rows_socket_instances,
        [](const impl& r) { return r.count(kArraySockets); });
    add(table_id::socket_summary_by_instance, "socket_summary_by_instance",
        with_file_groups({T("event_name"), I("object_instance_begin")}), "PFS_MAX_SOCKETS",
        rows_socket_summary_by_instance,
        [](const impl& r) { return r.count(kArraySockets); },
        truncatable(kResetSocket, kResetWait | kResetSocket));
    add(table_id::socket_summary_by_event_name, "socket_summary_by_event_name",
        with_file_groups({T("event_name")}), "PFS_MAX_CLASSES",
        rows_socket_summary_by_event_name,
        [](const impl& r) { return r.classes; },
        truncatable(kResetSocket, kResetWait | kResetSocket));
    add(table_id::memory_summary_global_by_event_name, "memory_summary_global_by_event_name",
        with_memory({T("event_name")}), "PFS_MAX_MEMORY_CLASSES",
        [](scan_state& s) { rows_memory_summary(s, summary_kind::global); },
        [](const impl& r) { return r.memory_classes; },
        truncatable(kResetMemory, kResetMemory));
    add(table_id::memory_summary_by_thread_by_event_name, "memory_summary_by_thread_by_event_name",
        with_memory({I("thread_id"), T("event_name")}), "PFS_MAX_THREADS, PFS_MAX_MEMORY_CLASSES",
        [](scan_state& s) { rows_memory_summary(s, summary_kind::by_thread); },
        [](const impl& r) { return r.count(kArrayThreadMemoryStats); },
        truncatable(kResetMemoryByThread, kResetMemoryByThread | kResetMemory | kResetMemoryByAccount |
                                            kResetMemoryByUser | kResetMemoryByHost));
    add(table_id::events_errors_summary_by_thread_by_error, "events_errors_summary_by_thread_by_error",
        with_errors({I("thread_id")}), "PFS_MAX_THREADS, PFS_MAX_ERRORS",
        [](scan_state& s) { rows_error_summary(s, summary_kind::by_thread); },
        [](const impl& r) { return r.count(kArrayThreadErrorStats); },
        truncatable(kResetErrorsByThread, kResetErrorsByThread | kResetErrors | kResetErrorsByAccount |
                                            kResetErrorsByUser | kResetErrorsByHost));
    add(table_id::events_errors_summary_global_by_error, "events_errors_summary_global_by_error",
        with_errors({}), "PFS_MAX_ERRORS",
        [](scan_state& s) { rows_error_summary(s, summary_kind::global); },
        [](const impl& r) { return r.error_rows; },
        truncatable(kResetErrors, kResetErrors));
    // MySQL: TRUNCATE resets the lock waits of the shares; that of
    // events_waits_summary_global_by_event_name resets them too.
    add(table_id::table_lock_waits_summary_by_table, "table_lock_waits_summary_by_table",
        with_table_lock_groups({T("object_type"), T("object_schema"), T("object_name")}), "PFS_MAX_TABLES",
        rows_table_lock_by_table,
        [](const impl& r) { return r.count(kArrayTableLockStats) == 0 ? 0 : r.count(kArrayTables); },
        truncatable(kResetTableLocks, kResetWait | kResetTableLocks));
    // Not truncatable (as MySQL): the rows are the channels' current state.
    add(table_id::tls_channel_status, "tls_channel_status",
        {T("channel"), T("property"), T("value")}, "PFS_MAX_TLS_PROPERTIES",
        rows_tls_channel_status,
        [](const impl& r) { return r.count(kArrayTlsProperties); });
    add(table_id::data_locks, "data_locks",
        {T("engine"), T("engine_lock_id"), I("engine_transaction_id", true), I("thread_id", true),
         I("event_id", true), T("object_schema", true), T("object_name", true), T("partition_name", true),
         T("subpartition_name", true), T("index_name", true), I("object_instance_begin"), T("lock_type"),
         T("lock_mode"), T("lock_status"), T("lock_data", true)},
        "PFS_MAX_DATA_LOCKS",
        rows_data_locks,
        [](const impl& r) { return r.count(kArrayDataLocks); });
    add(table_id::data_lock_waits, "data_lock_waits",
        {T("engine"), T("requesting_engine_lock_id"), I("requesting_engine_transaction_id", true),
         I("requesting_thread_id", true), I("requesting_event_id", true), I("requesting_object_instance_begin"),
         T("blocking_engine_lock_id"), I("blocking_engine_transaction_id", true), I("blocking_thread_id", true),
         I("blocking_event_id", true), I("blocking_object_instance_begin")},
        "PFS_MAX_DATA_LOCK_WAITS",
        rows_data_lock_waits,
        [](const impl& r) { return r.count(kArrayDataLockWaits); });
    add(table_id::metadata_locks, "metadata_locks",
        {T("object_type"), T("object_schema", true), T("object_name", true), T("column_name", true),
         I("object_instance_begin"), T("lock_type"), T("lock_duration"), T("lock_status"), T("source", true),
         I("owner_thread_id", true), I("owner_event_id", true)},
        "PFS_MAX_METADATA_LOCKS",
        rows_metadata_locks,
        [](const impl& r) { return r.count(kArrayMetadataLocks); });
    add(table_id::sem_instances, "sem_instances", {T("name"), I("object_instance_begin")}, "PFS_MAX_SEMS",
        [](scan_state& s) { rows_sync_instances(s, kArraySems); },
        [](const impl& r) { return r.count(kArraySems); });
    // Accounts, users and hosts (MySQL 8.0; MAX_SESSION_*_MEMORY from 8.0.31). TRUNCATE
    // restarts TOTAL_CONNECTIONS from the current connections.
    add(table_id::accounts, "accounts", {T("user", true), T("host", true), I("current_connections"), I("total_connections"), I("max_session_controlled_memory"), I("max_session_total_memory")}, "PFS_ACCOUNTS_SIZE",
        [](scan_state& s) { rows_holders(s, kHolderAccount); },
        [](const impl& r) { return r.count(kArrayAccounts); },
        truncatable(kResetAccounts, kNoEffect));
    add(table_id::users, "users", {T("user", true), I("current_connections"), I("total_connections"), I("max_session_controlled_memory"), I("max_session_total_memory")}, "PFS_USERS_SIZE",
        [](scan_state& s) { rows_holders(s, kHolderUser); },
        [](const impl& r) { return r.count(kArrayAccounts); },
        truncatable(kResetUsers, kNoEffect));
    add(table_id::hosts, "hosts", {T("host", true), I("current_connections"), I("total_connections"), I("max_session_controlled_memory"), I("max_session_total_memory")}, "PFS_HOSTS_SIZE",
        [](scan_state& s) { rows_holders(s, kHolderHost); },
        [](const impl& r) { return r.count(kArrayAccounts); },
        truncatable(kResetHosts, kNoEffect));
    // Summaries by account, user and host: TRUNCATE moves the live threads' rows into
    // their accounts and the accounts' into their users and hosts, then empties the
    // rows of the table's kind (MySQL 8.0).
    add(table_id::events_waits_summary_by_account_by_event_name, "events_waits_summary_by_account_by_event_name",
        with_stats({T("user", true), T("host", true), T("event_name")}), "PFS_ACCOUNTS_SIZE, PFS_MAX_CLASSES",
        [](scan_state& s) { rows_waits_summary_by_holder(s, summary_kind::by_account); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.classes; },
        truncatable(kResetWaitsByAccount, kResetWaitsByAccount | kResetWaitsByUser | kResetWaitsByHost));
    add(table_id::events_waits_summary_by_user_by_event_name, "events_waits_summary_by_user_by_event_name",
        with_stats({T("user", true), T("event_name")}), "PFS_USERS_SIZE, PFS_MAX_CLASSES",
        [](scan_state& s) { rows_waits_summary_by_holder(s, summary_kind::by_user); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.classes; },
        truncatable(kResetWaitsByUser, kResetWaitsByUser));
    add(table_id::events_waits_summary_by_host_by_event_name, "events_waits_summary_by_host_by_event_name",
        with_stats({T("host", true), T("event_name")}), "PFS_HOSTS_SIZE, PFS_MAX_CLASSES",
        [](scan_state& s) { rows_waits_summary_by_holder(s, summary_kind::by_host); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.classes; },
        truncatable(kResetWaitsByHost, kResetWaitsByHost));
    add(table_id::events_stages_summary_by_account_by_event_name, "events_stages_summary_by_account_by_event_name",
        with_stats({T("user", true), T("host", true), T("event_name")}), "PFS_ACCOUNTS_SIZE, PFS_MAX_STAGE_CLASSES",
        [](scan_state& s) { rows_stage_summaries(s, summary_kind::by_account); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.stage_classes; },
        truncatable(kResetStagesByAccount, kResetStagesByAccount | kResetStagesByUser | kResetStagesByHost | kResetStages));
    add(table_id::events_stages_summary_by_user_by_event_name, "events_stages_summary_by_user_by_event_name",
        with_stats({T("user", true), T("event_name")}), "PFS_USERS_SIZE, PFS_MAX_STAGE_CLASSES",
        [](scan_state& s) { rows_stage_summaries(s, summary_kind::by_user); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.stage_classes; },
        truncatable(kResetStagesByUser, kResetStagesByUser | kResetStages));
    add(table_id::events_stages_summary_by_host_by_event_name, "events_stages_summary_by_host_by_event_name",
        with_stats({T("host", true), T("event_name")}), "PFS_HOSTS_SIZE, PFS_MAX_STAGE_CLASSES",
        [](scan_state& s) { rows_stage_summaries(s, summary_kind::by_host); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.stage_classes; },
        truncatable(kResetStagesByHost, kResetStagesByHost | kResetStages));
    add(table_id::events_statements_summary_by_account_by_event_name, "events_statements_summary_by_account_by_event_name",
        with_statement_stats({T("user", true), T("host", true), T("event_name")}), "PFS_ACCOUNTS_SIZE, PFS_MAX_STATEMENT_CLASSES",
        [](scan_state& s) { rows_statement_summaries(s, summary_kind::by_account); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.statement_classes; },
        truncatable(kResetStatementsByAccount, kResetStatementsByAccount | kResetStatementsByUser | kResetStatementsByHost | kResetStatements));
    add(table_id::events_statements_summary_by_user_by_event_name, "events_statements_summary_by_user_by_event_name",
        with_statement_stats({T("user", true), T("event_name")}), "PFS_USERS_SIZE, PFS_MAX_STATEMENT_CLASSES",
        [](scan_state& s) { rows_statement_summaries(s, summary_kind::by_user); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.statement_classes; },
        truncatable(kResetStatementsByUser, kResetStatementsByUser | kResetStatements));
    add(table_id::events_statements_summary_by_host_by_event_name, "events_statements_summary_by_host_by_event_name",
        with_statement_stats({T("host", true), T("event_name")}), "PFS_HOSTS_SIZE, PFS_MAX_STATEMENT_CLASSES",
        [](scan_state& s) { rows_statement_summaries(s, summary_kind::by_host); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.statement_classes; },
        truncatable(kResetStatementsByHost, kResetStatementsByHost | kResetStatements));
    add(table_id::events_transactions_summary_by_account_by_event_name, "events_transactions_summary_by_account_by_event_name",
        with_transaction_stats({T("user", true), T("host", true), T("event_name")}), "PFS_ACCOUNTS_SIZE",
        [](scan_state& s) { rows_transaction_summaries(s, summary_kind::by_account); },
        [](const impl& r) { return r.count(kArrayAccounts) * std::uint64_t{1}; },
        truncatable(kResetTransactionsByAccount, kResetTransactionsByAccount | kResetTransactionsByUser | kResetTransactionsByHost | kResetTransactions));
    add(table_id::events_transactions_summary_by_user_by_event_name, "events_transactions_summary_by_user_by_event_name",
        with_transaction_stats({T("user", true), T("event_name")}), "PFS_USERS_SIZE",
        [](scan_state& s) { rows_transaction_summaries(s, summary_kind::by_user); },
        [](const impl& r) { return r.count(kArrayAccounts) * std::uint64_t{1}; },
        truncatable(kResetTransactionsByUser, kResetTransactionsByUser | kResetTransactions));
    add(table_id::events_transactions_summary_by_host_by_event_name, "events_transactions_summary_by_host_by_event_name",
        with_transaction_stats({T("host", true), T("event_name")}), "PFS_HOSTS_SIZE",
        [](scan_state& s) { rows_transaction_summaries(s, summary_kind::by_host); },
        [](const impl& r) { return r.count(kArrayAccounts) * std::uint64_t{1}; },
        truncatable(kResetTransactionsByHost, kResetTransactionsByHost | kResetTransactions));
    add(table_id::memory_summary_by_account_by_event_name, "memory_summary_by_account_by_event_name",
        with_memory({T("user", true), T("host", true), T("event_name")}), "PFS_ACCOUNTS_SIZE, PFS_MAX_MEMORY_CLASSES",
        [](scan_state& s) { rows_memory_summary(s, summary_kind::by_account); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.memory_classes; },
        truncatable(kResetMemoryByAccount, kResetMemoryByAccount | kResetMemoryByUser | kResetMemoryByHost | kResetMemory | kResetMemoryByThread));
    add(table_id::memory_summary_by_user_by_event_name, "memory_summary_by_user_by_event_name",
        with_memory({T("user", true), T("event_name")}), "PFS_USERS_SIZE, PFS_MAX_MEMORY_CLASSES",
        [](scan_state& s) { rows_memory_summary(s, summary_kind::by_user); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.memory_classes; },
        truncatable(kResetMemoryByUser, kResetMemoryByAccount | kResetMemoryByUser | kResetMemoryByHost | kResetMemory | kResetMemoryByThread));
    add(table_id::memory_summary_by_host_by_event_name, "memory_summary_by_host_by_event_name",
        with_memory({T("host", true), T("event_name")}), "PFS_HOSTS_SIZE, PFS_MAX_MEMORY_CLASSES",
        [](scan_state& s) { rows_memory_summary(s, summary_kind::by_host); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.memory_classes; },
        truncatable(kResetMemoryByHost, kResetMemoryByAccount | kResetMemoryByUser | kResetMemoryByHost | kResetMemory | kResetMemoryByThread));
    add(table_id::events_errors_summary_by_account_by_error, "events_errors_summary_by_account_by_error",
        with_errors({T("user", true), T("host", true)}), "PFS_ACCOUNTS_SIZE, PFS_MAX_ERRORS",
        [](scan_state& s) { rows_error_summary(s, summary_kind::by_account); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.error_rows; },
        truncatable(kResetErrorsByAccount, kResetErrorsByAccount | kResetErrorsByUser | kResetErrorsByHost | kResetErrors));
    add(table_id::events_errors_summary_by_user_by_error, "events_errors_summary_by_user_by_error",
        with_errors({T("user", true)}), "PFS_USERS_SIZE, PFS_MAX_ERRORS",
        [](scan_state& s) { rows_error_summary(s, summary_kind::by_user); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.error_rows; },
        truncatable(kResetErrorsByUser, kResetErrorsByUser | kResetErrors));
    add(table_id::events_errors_summary_by_host_by_error, "events_errors_summary_by_host_by_error",
        with_errors({T("host", true)}), "PFS_HOSTS_SIZE, PFS_MAX_ERRORS",
        [](scan_state& s) { rows_error_summary(s, summary_kind::by_host); },
        [](const impl& r) { return r.count(kArrayAccounts) * r.error_rows; },
        truncatable(kResetErrorsByHost, kResetErrorsByHost | kResetErrors));
    // MySQL 8.4: ENABLED and FREQUENCY updatable; VALUE is beyond MySQL (which exports
    // the values only), and so are the synchronous METRIC_TYPEs.
    add(table_id::setup_meters, "setup_meters", {T("name"), I("frequency"), T("enabled"), T("description")},
        "PFS_MAX_METERS",
        rows_setup_meters,
        [](const impl& r) { return r.count(kArrayMeters); },
        keyed({"name"}, {"frequency", "enabled"}));
    add(table_id::setup_metrics, "setup_metrics",
        {T("name"), T("meter"), T("metric_type"), T("num_type"), F("value"), T("unit"), T("description")},
        "PFS_MAX_METRICS",
        rows_setup_metrics,
        [](const impl& r) { return r.count(kArrayMetrics); });
    // clang-format on
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t[i].def.id != i) std::abort();  // the order is table_id's: a registry bug, found by every test
    return t;
  }();
  return all;
}

}  // namespace pfs::reader::detail

// The reader's internals shared by its files: the reader state (a mapping and a
// checked copy of its geometry), the status table's fixed lists, the state of one
// scan, and the row builders over it, which live in rows_*.cpp by table family; the
// table registry (tables.cpp) names each table's builder.
#pragma once

#include <array>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "agent/reader/internal/consistent_copy.h"
#include "agent/reader/packed_rows.h"
#include "agent/region/account_layout.h"
#include "agent/region/error_layout.h"
#include "agent/region/io_layout.h"
#include "agent/region/lock_layout.h"
#include "agent/region/memory_layout.h"
#include "agent/region/meter_layout.h"
#include "agent/region/region.h"
#include "agent/region/tls_layout.h"
#include "agent/region/work_layout.h"
#include "timers/timer.h"

namespace pfs::reader {

using namespace pfs::layout;

// ---------------------------------------------------------------------------
// The reader state: the mapping and a private, checked copy of its geometry.

struct region_reader::impl {
  struct array_view {
    const char* base = nullptr;
    std::uint64_t count = 0;
    std::uint64_t stride = 0;
  };

  region_map map;
  bool check_size_at_each_scan = true;  // region_reader::check_size_at_each_scan
  array_view arrays[kArrayCount];
  std::uint64_t threads = 0;      // thread slots
  std::uint64_t classes = 0;      // class slots (= max_classes)
  std::uint64_t stack_depth = 0;  // wait_stack_depth
  std::uint64_t history_per_thread = 0;
  std::uint64_t history_long_batch = 0;  // status only
  std::uint64_t indexes_per_table = 0;   // index_stat slots per table share
  std::uint64_t statement_stride = 0;    // bytes per statement record (with its SQL_TEXT)
  std::uint64_t max_sql_text_length = 0;
  std::uint64_t memory_classes = 0;  // per-thread memory statistics slots
  std::uint64_t error_rows = 0;      // per-thread error rows (declared errors + the NULL row)
  std::uint64_t stage_classes = 0;   // per-thread statistics slots of stages, statements
  std::uint64_t statement_classes = 0;
  std::uint64_t stage_history = 0;  // per-thread ring and stack sizes
  std::uint64_t statement_stack = 0;
  std::uint64_t statement_history = 0;
  std::uint64_t transaction_history = 0;
  std::atomic<std::uint64_t> torn{0};
  std::atomic<std::uint64_t> invalid{0};
  // Class names as text, made once: a class is never freed and its name never
  // changes once registered, and making them again for every scan (UTF-8 checked,
  // one allocation each) was a tenth of a small scan. Indexed by class slot; ""
  // until first read whole. Scans of one reader may run on several threads.
  mutable std::mutex class_names_mutex;
  mutable std::vector<std::string> class_names;
  // The kinds of the first class_kinds.size() class records, read whole once
  // (under class_names_mutex): a class's kind is set when it is registered and
  // never changes, so a summary of one kind copies only that kind's records, not
  // the few hundred classes of every kind a program registers.
  mutable std::vector<std::uint8_t> class_kinds;
  // SOURCE texts, made once as class names are (a source record never changes once
  // ready): (ready, text) by source slot, under class_names_mutex.
  mutable std::vector<std::pair<bool, std::string>> source_texts;

  template <class T>
  const T* at(array_id id, std::uint64_t i) const {
    const array_view& a = arrays[id];
    return i < a.count ? reinterpret_cast<const T*>(a.base + i * sizeof(T)) : nullptr;
  }
  std::uint64_t count(array_id id) const { return arrays[id].count; }
  // Records whose size is the array's stride (statements, with their text).
  const char* at_stride(array_id id, std::uint64_t i) const {
    const array_view& a = arrays[id];
    return i < a.count ? a.base + i * a.stride : nullptr;
  }
  std::uint64_t stride(array_id id) const { return arrays[id].stride; }
  const region_header& header() const { return map.header(); }
  // The thread slots a scan walks: those below the header's high-water mark of
  // claimed slots (none when the agent says none was claimed yet; all of them in a
  // region that has no mark), read at each call.
  std::uint64_t used_threads() const {
    const std::uint32_t mark = load_relaxed(header().thread_slots_used);
    const std::uint64_t used = mark & ~kThreadSlotsKnown;
    if ((mark & kThreadSlotsKnown) != 0) return used > threads ? threads : used;
    return used == 0 || used > threads ? threads : used;
  }

  // The class records a scan looks at: those below the header's count of records
  // ever allocated (all of them in a region that has none), read at each call.
  std::uint64_t used_classes() const {
    const std::uint64_t used = load_relaxed(header().classes_used);
    return used == 0 || used > classes ? classes : used;
  }

  // Copies the directory out of the mapped header and checks it against the mapping
  // (independently of region_map::validate, so a header changed after validation
  // cannot make this reader read outside the file).
  region_error load_geometry();
};

namespace detail {

class scan_state;
using row_builder_fn = void (*)(scan_state&);
using estimate_fn = std::uint64_t (*)(const region_reader::impl&);
using expected_fn = std::uint64_t (*)(const region_reader::impl&, std::uint64_t bound);

// A table of the registry (tables.cpp): its public definition, the row builder
// that makes its rows, an upper bound of its row count from the array sizes, and
// the rows to expect below that bound (nullptr: the bound) from the provider's
// counters.
struct table_entry {
  table_def def;
  row_builder_fn rows;
  estimate_fn estimate;
  expected_fn expected;
};
// Every table, in table_id order.
const std::vector<table_entry>& registry() noexcept;
// The rule of a writable column (tables.cpp).
const column_rule* column_rule_of(std::string_view name) noexcept;

// Arrays this reader knows, with the record size it expects and the name used in the
// status table.
struct known_array {
  array_id id;
  std::uint64_t stride;
  const char* status_name;
};
inline constexpr known_array kKnownArrays[] = {
    {kArrayClasses, sizeof(class_record), "instrument_classes"},
    {kArrayThreads, sizeof(thread_record), "threads"},
    {kArrayWaitStacks, sizeof(wait_record), "events_waits_current"},
    {kArrayWaitHistory, sizeof(wait_record), "events_waits_history"},
    {kArrayThreadClassStats, sizeof(wait_stat), "events_waits_summary_by_thread_by_event_name"},
    {kArrayHistoryLong, sizeof(wait_record), "events_waits_history_long"},
    {kArrayHistoryLongBatches, sizeof(batch_record), "events_waits_history_long_batches"},
    {kArrayMutexes, sizeof(sync_instance), "mutex_instances"},
    {kArrayRwlocks, sizeof(sync_instance), "rwlock_instances"},
    {kArrayConds, sizeof(sync_instance), "cond_instances"},
    {kArraySetupActors, sizeof(actor_record), "setup_actors"},
    {kArraySources, sizeof(source_record), "sources"},
    {kArrayFiles, sizeof(file_instance), "file_instances"},
    {kArrayClassIo, sizeof(io_stats), "file_summary_by_event_name"},
    {kArrayTables, sizeof(table_share), "table_shares"},
    {kArrayTableIndexes, sizeof(index_stat), "table_index_stats"},
    {kArraySetupObjects, sizeof(object_record), "setup_objects"},
    {kArrayStageCurrent, sizeof(stage_record), "events_stages_current"},
    {kArrayStageHistory, sizeof(stage_record), "events_stages_history"},
    {kArrayStageHistoryLong, sizeof(stage_record), "events_stages_history_long"},
    {kArrayStatementCurrent, 0, "events_statements_current"},  // 0: the header's statement_stride
    {kArrayStatementHistory, 0, "events_statements_history"},
    {kArrayStatementHistoryLong, 0, "events_statements_history_long"},
    {kArrayTransactionCurrent, sizeof(transaction_record), "events_transactions_current"},
    {kArrayTransactionHistory, sizeof(transaction_record), "events_transactions_history"},
    {kArrayTransactionHistoryLong, sizeof(transaction_record), "events_transactions_history_long"},
    {kArrayThreadStageStats, sizeof(wait_stat), "events_stages_summary_by_thread_by_event_name"},
    {kArrayThreadStatementStats, sizeof(statement_stat), "events_statements_summary_by_thread_by_event_name"},
    {kArrayThreadTransactionStats, sizeof(transaction_stat),
     "events_transactions_summary_by_thread_by_event_name"},
    {kArrayClassStageStats, sizeof(wait_stat), "events_stages_summary_global_by_event_name"},
    {kArrayClassStatementStats, sizeof(statement_stat), "events_statements_summary_global_by_event_name"},
    {kArrayClassTransactionStats, sizeof(transaction_stat),
     "events_transactions_summary_global_by_event_name"},
    {kArrayDigests, sizeof(digest_record), "events_statements_summary_by_digest"},
    {kArrayStatementHistogram, sizeof(latency_histogram), "events_statements_histogram_global"},
    {kArrayWaitHistograms, sizeof(thread_histogram), "wait_histograms"},
    {kArrayClassWaitHistograms, sizeof(wait_histogram), "events_waits_histogram_global_by_event_name"},
    {kArrayLockContention, sizeof(contention_record), "lock_contention_by_instance"},
    {kArrayThreadGlobalStats, sizeof(wait_stat), "events_waits_summary_global_by_event_name"},
    {kArrayFileWaitStats, sizeof(wait_stat), "file_wait_summaries"},
    {kArraySockets, sizeof(socket_instance), "socket_instances"},
    {kArraySocketWaitStats, sizeof(wait_stat), "socket_wait_summaries"},
    {kArrayThreadMemoryStats, sizeof(memory_stat), "memory_summary_by_thread_by_event_name"},
    {kArrayClassMemoryStats, sizeof(memory_class_stat), "memory_summary_global_by_event_name"},
    {kArrayErrors, sizeof(error_record), "errors"},
    {kArrayThreadErrorStats, sizeof(error_stat), "events_errors_summary_by_thread_by_error"},
    {kArrayClassErrorStats, sizeof(error_stat), "events_errors_summary_global_by_error"},
    {kArrayMetadataLocks, sizeof(metadata_lock_record), "metadata_locks"},
    {kArrayDataLocks, sizeof(data_lock_record), "data_locks"},
    {kArrayDataLockWaits, sizeof(data_lock_wait_record), "data_lock_waits"},
    {kArrayTableLockStats, sizeof(table_lock_stat), "table_lock_waits_summary_by_table"},
    {kArrayTlsProperties, sizeof(tls_property_record), "tls_channel_status"},
    {kArraySems, sizeof(sync_instance), "sem_instances"},
    // Accounts, users and hosts, and the rows of each (account_layout.h).
    {kArrayAccounts, sizeof(account_record), "accounts"},
    {kArrayAccountWaitStats, sizeof(wait_stat), "events_waits_summary_by_account_by_event_name"},
    {kArrayAccountStageStats, sizeof(wait_stat), "events_stages_summary_by_account_by_event_name"},
    {kArrayAccountStatementStats, sizeof(statement_stat),
     "events_statements_summary_by_account_by_event_name"},
    {kArrayAccountTransactionStats, sizeof(transaction_stat),
     "events_transactions_summary_by_account_by_event_name"},
    {kArrayAccountMemoryStats, sizeof(memory_stat), "memory_summary_by_account_by_event_name"},
    {kArrayAccountErrorStats, sizeof(error_stat), "events_errors_summary_by_account_by_error"},
    {kArrayMeters, sizeof(meter_record), "setup_meters"},
    {kArrayMetrics, sizeof(metric_record), "setup_metrics"},
    {kArrayThreadMetricValues, sizeof(std::uint64_t), "metric_values_by_thread"},
};

// Status names of the lost counters, by lost_id (every id below kLostCount needs one:
// a missing name would be a null pointer). trace_errors is the slot after
// sources_lost (kTraceErrors, trace files); only the first kLostCount are shown.
inline constexpr const char* kLostNames[] = {
    "mutex_classes_lost",
    "rwlock_classes_lost",
    "cond_classes_lost",
    "thread_classes_lost",
    "file_classes_lost",
    "table_classes_lost",
    "mutex_instances_lost",
    "rwlock_instances_lost",
    "cond_instances_lost",
    "thread_instances_lost",
    "file_instances_lost",
    "file_handles_lost",
    "table_instances_lost",
    "table_handles_lost",
    "index_stats_lost",
    "locker_lost",
    "sources_lost",
    "trace_errors",
    "region_faults",
    "stage_classes_lost",
    "statement_classes_lost",
    "digest_lost",
    "nested_statement_lost",
    "work_call_errors",
    "sql_text_truncated",
    "wait_histograms_shared",
    "lock_contention_lost",
    "socket_classes_lost",
    "socket_instances_lost",
    "memory_classes_lost",
    "errors_lost",
    "metadata_locks_lost",
    "data_locks_lost",
    "data_lock_waits_lost",
    "tls_properties_lost",
    "sem_classes_lost",
    "sem_instances_lost",
    "accounts_lost",
    "users_lost",
    "hosts_lost",
    "meters_lost",
    "metrics_lost",
};
static_assert(std::size(kLostNames) >= kLostCount, "a lost counter without a status name");

// Fixed number of status rows before the per-array and lost rows.
inline constexpr std::uint64_t kStatusFixedRows = 12;
inline constexpr std::uint64_t kStatusRows =
    kStatusFixedRows + 2 * std::size(kKnownArrays) + 1 + kLostCount + 2 + 4;

// One scan: working state on the stack.
struct class_entry {
  bool valid = false;
  std::uint32_t kind_index = 0;
  std::uint8_t kind = 0;
  std::uint8_t flags = 0;
  std::uint8_t traits = 0;
  wait_stat stat{};
  std::string_view name;  // held by the reader (impl::class_names)
};
// A live thread as the event tables of units of work need it.
struct live_thread {
  std::uint64_t slot = 0;
  std::uint64_t thread_id = 0;
  std::uint64_t horizon[kTruncateTables] = {};
  std::uint64_t history_index[3] = {};  // stages, statements, transactions
  std::uint32_t holder[3] = {};         // its account, user and host (1-based holder slots; 0 = none)
};

// The tables of events kept three ways (MySQL's _current, _history and
// _history_long): per thread its running and latest events, per thread a ring of
// its last events, one ring for the whole process. In this order: the arrays and
// TRUNCATE horizons of units of work are indexed by it.
enum class history_kind { current, history, history_long };
// A summary of units of work by thread and event name, or by event name alone
// (the exited threads' buckets and every live thread).
// By account, user or host: the holders' rows and their live threads'
// (holder_rows.h).
enum class summary_kind { by_thread, global, by_account, by_user, by_host };
inline bool by_holder(summary_kind k) { return k >= summary_kind::by_account; }
inline std::uint8_t holder_kind_of(summary_kind k) {
  return static_cast<std::uint8_t>(1 + static_cast<int>(k) - static_cast<int>(summary_kind::by_account));
}

// What the row builders of one scan share, on the stack for the scan's duration:
// the region and its checked geometry, the sink and where a paused scan resumes,
// the row being built and its text, and what is copied once per scan (classes,
// timer converters, SOURCE texts). Row builders are free functions over it, one
// family per rows_*.cpp (declared below); the registry (tables.cpp) names each
// table's.
class scan_state {
 public:
  // start: the record position a paused scan resumes at (0: the beginning).
  scan_state(const region_reader::impl& reader, row_sink& sink, std::uint64_t start = 0)
      : r(reader), h(reader.header()), out(sink), start_(start) {
    swap_scratch();
  }
  ~scan_state() { swap_scratch(); }
  scan_state(const scan_state&) = delete;  // converters point into cycle_epochs_
  scan_state& operator=(const scan_state&) = delete;

  const region_reader::impl& r;
  const region_header& h;
  row_sink& out;
  bool stopped = false;  // the sink wants no more rows
  bool paused = false;   // a pausable builder stopped at resume_position
  std::uint64_t resume_position = 0;
  std::uint64_t torn = 0;                          // records skipped because they kept changing
  std::uint64_t invalid = 0;                       // records skipped because an index in them is invalid
  std::vector<class_entry> classes;                // load_classes(): by class index - 1
  converter converters[timers::timer_kind_count];  // load_timers(): by timer kind

  // A new row: the one being built is handed to the sink first.
  row_builder& add_row() {
    flush();
    pending_ = true;
    row_head_checked_ = head_checked_;
    head_checked_ = false;
    cur_.n = 0;
    next_text_ = 0;
    return cur_;
  }
  // Hands the row being built to the sink if it passes the sink's filter.
  void flush() {
    if (!pending_ || stopped) return;
    pending_ = false;
    const std::uint64_t skip = row_head_checked_ ? kHeadColumns : 0;
    if (out.filter != nullptr && !out.filter->matches(cur_.slots.data(), skip)) return;
    if (!out.row(cur_.slots.data(), cur_.n)) stopped = true;
  }
  // Whether a record copy is a row (a torn one is counted).
  // Whether the sink reads column k (the others may be left NULL, uncomputed).
  bool wants(std::size_t k) const { return out.wanted == nullptr || out.wanted[k]; }
  bool accept(rd res) {
    if (res == rd::torn) ++torn;
    return res == rd::ok;
  }
  // Text made for the row being built (copied from a record, or computed): held in
  // slots reused row after row. No row has more than a handful of text cells.
  cell text_cell(std::string_view s) {
    std::string& slot = text_slots_[next_text_++ % kTextSlots];
    slot.assign(s.data(), s.size());
    return cell{false, 0, slot, {}};
  }
  cell text_cell(std::string&& s) {
    std::string& slot = text_slots_[next_text_++ % kTextSlots];
    slot = std::move(s);
    return cell{false, 0, slot, {}};
  }

  // Columns 0, 1 and 3 (thread_id, event_id, event_name) of the event tables.
  static constexpr std::uint64_t kHeadColumns = 0b1011;
  // Pausable builders (one loop over an array) start at this position...
  std::uint64_t start_position() const { return start_; }
  // ... and call this before each record: true when they must return now (the sink
  // asked to pause, or stopped), with the scan to go on at `position`.
  bool pause_before(std::uint64_t position, std::uint64_t record_bytes) {
    flush();
    if (stopped) return true;
    if (position % 64 != 0 || position == start_ || !out.pause((position - start_) * record_bytes))
      return false;
    paused = true;
    resume_position = position;
    return true;
  }
  // Whether the sink's filter rules an event out by its head (thread_id, event_id and
  // event_name: columns 0, 1 and 3 of every event table), before its row is built.
  // When it does not, the row add_row starts next is not tested on them again.
  bool head_rejected(std::uint64_t thread_id, std::uint64_t event_id, std::string_view event_name) {
    const row_filter* f = out.filter;
    if (f == nullptr) return false;
    if (!f->may_match_int(0, clamp64(thread_id)) || !f->may_match_int(1, clamp64(event_id)) ||
        !f->may_match_text(3, event_name))
      return true;
    head_checked_ = true;  // for the row add_row starts next
    return false;
  }
  // A row that passed head_rejected went to the sink without add_row (packed).
  void head_check_used() { head_checked_ = false; }
  // The same test on a record's fields read one by one before the record is copied
  // (class by its 1-based index, the verdict cached per class): a record the
  // provider is rewriting may then be judged on a mix of its old and new fields,
  // which is what a scan reaching the slot a moment earlier or later would see.
  // Inline: it runs for every record of a history_long scan, most of which it rejects.
  bool head_prefiltered(std::uint64_t thread_id, std::uint64_t event_id, std::uint32_t class_index) {
    const row_filter& f = *out.filter;
    if (!f.may_match_int(0, clamp64(thread_id)) || !f.may_match_int(1, clamp64(event_id))) return true;
    return f.tests(3) && class_prefiltered(class_index);
  }
  // Whether the sink's filter tests the head at all (head_prefiltered needs one).
  bool prefilters() const {
    const row_filter* f = out.filter;
    return f != nullptr && (f->tests(0) || f->tests(1) || f->tests(3));
  }

  // Every class record, copied once per scan (into classes).
  void load_classes();
  // The valid classes of the kinds `of_kind` accepts, copied (classes is left as
  // it was), with their 0-based indices, ascending.
  struct indexed_class {
    std::uint32_t index;
    class_entry entry;
  };
  std::vector<indexed_class> load_classes_of_kind(bool (*of_kind)(std::uint8_t));
  // One class record, copied on demand (a table whose rows name few classes, such
  // as threads or events_waits_current: not every class of the program read for a
  // few rows); the same entry as load_classes makes, and every class once a scan
  // names many. nullptr if out of range or not allocated. The entry stays valid
  // for the scan.
  const class_entry* class_on_demand(std::uint32_t index);
  // 1-based class index → the class, nullptr if out of range or not allocated.
  const class_entry* class_at(std::uint32_t index) const {
    if (index == 0 || index > classes.size()) return nullptr;
    const class_entry& e = classes[index - 1];
    return e.valid ? &e : nullptr;
  }
  // The header's timer converters (into converters), CYCLE's epochs included.
  void load_timers();
  // Picoseconds from a raw timer value to now, read in this process (timers that
  // are per thread or unavailable: nullopt).
  std::optional<std::uint64_t> elapsed_now(std::uint8_t timer_byte, std::uint64_t start) const {
    const std::uint8_t timer = event_clock(timer_byte);
    if (timer < 1 || timer >= timers::timer_kind_count || converters[timer].mult == 0) return std::nullopt;
    const auto kind = static_cast<timers::timer_kind>(timer);
    if (kind == timers::timer_kind::thread_cpu) return std::nullopt;
    const std::uint64_t s = to_pico(converters[timer], start);
    const std::uint64_t n = to_pico(converters[timer], timers::read(kind));
    return n > s ? n - s : 0;
  }
  // SOURCE text of a 1-based source index, looked up once per scan; nullptr when unknown.
  const std::string* source_ref(std::uint32_t index);

 private:
  std::uint64_t start_ = 0;
  row_builder cur_;  // the row being built
  bool pending_ = false;
  bool head_checked_ = false;      // head_rejected passed the row add_row starts next
  bool row_head_checked_ = false;  // ... the row being built
  static constexpr unsigned kTextSlots = 16;
  std::string text_slots_[kTextSlots];
  unsigned next_text_ = 0;
  // The row's cells and text slots, taken from the thread's spares when the scan
  // starts and given back when it ends: a scan of a small table allocated them
  // again every time (a monitoring query scans a few rows, thousands of times).
  void swap_scratch() noexcept;
  void copy_class(std::uint64_t i, class_entry& e);
  bool classes_loaded_ = false;
  std::array<std::pair<std::uint32_t, class_entry>, 16> on_demand_{};  // class_on_demand: (index, entry)
  std::size_t on_demand_count_ = 0;
  epoch_copy cycle_epochs_[kCycleEpochSlots];  // converters[CYCLE].epochs
  // source_ref's sources of this scan: the first 16 in an array (a small scan
  // allocates nothing), the others in the map.
  std::array<std::pair<std::uint32_t, const std::string*>, 16> first_sources_{};
  std::size_t first_sources_count_ = 0;
  std::unordered_map<std::uint32_t, const std::string*> sources_;
  const std::string* read_source(std::uint32_t index);
  std::vector<std::int8_t> class_verdict_;  // head_prefiltered: -1 unknown, 0 rejected, 1 may match
  // head_prefiltered's test of event_name, by class (the verdict cached per class).
  bool class_prefiltered(std::uint32_t class_index);
};

// ---------------------------------------------------------------------------
// What several families of row builders share.

// Every allocated file instance whose class is an allocated file class, in array
// order; the others are counted invalid.
template <class Fn>
void for_each_file(scan_state& s, Fn&& fn) {
  s.load_classes();
  file_copy f;
  for (std::uint64_t i = 0; i < s.r.count(kArrayFiles); ++i) {
    if (!s.accept(read_file(*s.r.at<file_instance>(kArrayFiles, i), f))) continue;
    const wait_stat* w = s.r.at<wait_stat>(kArrayFileWaitStats, i);
    f.waits = w != nullptr ? load_stat(*w) : kZeroStat;
    const class_entry* c = s.class_at(f.class_index);
    if (c == nullptr || c->kind != kKindFile) {
      ++s.invalid;
      continue;
    }
    fn(f, *c);
  }
}

// Every allocated socket instance whose class is an allocated socket class, in
// array order; the others are counted invalid.
template <class Fn>
void for_each_socket(scan_state& s, Fn&& fn) {
  s.load_classes();
  socket_copy k;
  for (std::uint64_t i = 0; i < s.r.count(kArraySockets); ++i) {
    if (!s.accept(read_socket(*s.r.at<socket_instance>(kArraySockets, i), k))) continue;
    const wait_stat* w = s.r.at<wait_stat>(kArraySocketWaitStats, i);
    k.waits = w != nullptr ? load_stat(*w) : kZeroStat;
    const class_entry* c = s.class_at(k.class_index);
    if (c == nullptr || c->kind != kKindSocket) {
      ++s.invalid;
      continue;
    }
    fn(k, *c);
  }
}

// A table share and its declared indexes (table io rows, and the object of a wait).
struct index_copy {
  fixed_str<kIndexNameLen> name;
  table_io_stat stat = kZeroTableIo;
};
struct table_copy {
  std::uint8_t object_type = 0;
  fixed_str<kObjectSchemaLen> schema;
  fixed_str<kTableNameLen> name;
  table_io_stat no_index = kZeroTableIo;
  std::vector<index_copy> indexes;  // the declared ones
};
inline const char* object_type_name(std::uint8_t type) {
  return type == kObjectTypeTable ? "TABLE" : type == kObjectTypeTemporaryTable ? "TEMPORARY TABLE" : nullptr;
}
// Copies the share in slot `slot` (inside a read_versioned / read_referenced copy)
// and its declared indexes, with their statistics if `stats` (rows_io.cpp).
void copy_table(const region_reader::impl& r, std::uint64_t slot, const table_share& s, table_copy& c,
                bool stats);

// The allocated threads and what the event tables need of them (rows_work.cpp).
std::vector<live_thread> live_threads(scan_state& s);
// timer_start, timer_end, timer_wait of any event (running: end = now; rows_waits.cpp).
void append_event_times(const scan_state& s, row_builder& x, std::uint8_t timer, bool running,
                        std::uint64_t start, std::uint64_t end);
// The per-class wait histograms of the registered wait classes: exited threads' +
// every live (thread, class) one (rows_work_summaries.cpp; after s.load_classes()).
// Only those classes are summed: a region has room for many more classes than a
// program registers, and a histogram is 3.6 KB.
struct class_histograms {
  std::vector<std::int32_t> slot;  // per class: its index in sums, -1 when not summed
  std::vector<wait_histogram> sums;
  const wait_histogram* of(std::size_t c) const { return slot[c] < 0 ? nullptr : &sums[slot[c]]; }
};
class_histograms wait_class_histograms(scan_state& s);

// ---------------------------------------------------------------------------
// The row builders, one family per rows_*.cpp. A table's registry entry
// (tables.cpp) names its builder; a builder of several tables takes what tells
// them apart (history_kind, summary_kind, an array).

// rows_setup.cpp: the setup tables, threads, performance_timers, status.
void rows_setup_instruments(scan_state& s);
void rows_setup_consumers(scan_state& s);
void rows_setup_timers(scan_state& s);
void rows_setup_actors(scan_state& s);
void rows_setup_objects(scan_state& s);
void rows_performance_timers(scan_state& s);
void rows_threads(scan_state& s);
void rows_status(scan_state& s);
// rows_waits.cpp: events_waits_current, _history, _history_long.
void rows_waits(scan_state& s, history_kind which);
// rows_summaries.cpp: the wait summaries and the sync instance tables.
void rows_waits_summary_global(scan_state& s);
void rows_waits_summary_by_thread(scan_state& s);
void rows_waits_summary_by_instance(scan_state& s);
void rows_sync_instances(scan_state& s,
                         array_id which);  // kArrayMutexes, kArrayRwlocks, kArrayConds, kArraySems
// rows_io.cpp: file io and table io.
void rows_file_instances(scan_state& s);
void rows_file_summary_by_instance(scan_state& s);
void rows_file_summary_by_event_name(scan_state& s);
void rows_table_io_by_table(scan_state& s);
void rows_table_io_by_index_usage(scan_state& s);
// rows_table_locks.cpp: table_lock_waits_summary_by_table.
void rows_table_lock_by_table(scan_state& s);
// rows_socket.cpp: socket io.
void rows_socket_instances(scan_state& s);
void rows_socket_summary_by_instance(scan_state& s);
void rows_socket_summary_by_event_name(scan_state& s);
// rows_work.cpp: events_stages_*, events_statements_*, events_transactions_*.
void rows_stages(scan_state& s, history_kind which);
void rows_statements(scan_state& s, history_kind which);
void rows_transactions(scan_state& s, history_kind which);
// rows_work_summaries.cpp: the summaries of units of work and the histograms.
void rows_stage_summaries(scan_state& s, summary_kind which);
void rows_statement_summaries(scan_state& s, summary_kind which);
void rows_transaction_summaries(scan_state& s, summary_kind which);
void rows_digests(scan_state& s);
void rows_statement_histogram_global(scan_state& s);
void rows_statement_histogram_by_digest(scan_state& s);
void rows_wait_histograms(scan_state& s);
// rows_contention.cpp: lock_contention_by_instance.
void rows_lock_contention(scan_state& s);
// rows_memory.cpp: memory_summary_global_by_event_name, _by_thread_by_event_name.
void rows_memory_summary(scan_state& s, summary_kind which);
// rows_errors.cpp: events_errors_summary_global_by_error, _by_thread_by_error.
void rows_error_summary(scan_state& s, summary_kind which);
// events_waits_summary_by_{account,user,host}_by_event_name (rows_summaries.cpp).
void rows_waits_summary_by_holder(scan_state& s, summary_kind which);
// accounts, users, hosts (rows_accounts.cpp): kind is a holder_kind.
void rows_holders(scan_state& s, std::uint8_t kind);
// rows_meters.cpp: setup_meters, setup_metrics (MySQL 8.4's telemetry tables).
void rows_setup_meters(scan_state& s);
void rows_setup_metrics(scan_state& s);
// rows_tls.cpp: tls_channel_status.
void rows_tls_channel_status(scan_state& s);
// rows_data_locks.cpp: data_locks, data_lock_waits.
void rows_data_locks(scan_state& s);
void rows_data_lock_waits(scan_state& s);
// rows_metadata.cpp: metadata_locks, and the object of a metadata lock wait.
struct metadata_lock_copy {
  std::uint8_t lock_type = 0, duration = 0, status = 0;
  std::uint64_t identity = 0, owner_thread_id = 0, owner_event_id = 0;
  std::uint32_t source_index = 0;
  fixed_str<kMdlObjectTypeLen> object_type;
  fixed_str<kMdlNameLen> schema, name, column;
};
void copy_metadata_lock(const metadata_lock_record& r, metadata_lock_copy& c);
void rows_metadata_locks(scan_state& s);

}  // namespace detail
}  // namespace pfs::reader

// The reader library: see reader.h. Everything in the region is untrusted input;
// every shared field is read with layout::load_relaxed / load_acquire.
#include "agent/reader/reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <utility>

#include "agent/reader/internal/reader_internal.h"
#include "agent/region/fault_guard.h"

namespace pfs::reader {

using namespace pfs::layout;
using namespace detail;

namespace {

region_error corrupt(std::string message, std::string detail = {}) {
  region_error e;
  e.code = region_errc::corrupt;
  e.message = std::move(message);
  e.detail = std::move(detail);
  return e;
}

region_error internal_error(const char* what) {
  region_error e;
  e.code = region_errc::io;
  e.message = std::string("could not read region: ") + what;
  return e;
}

region_error out_of_memory() {
  region_error e;
  e.code = region_errc::io;
  e.message = "out of memory while reading region";
  e.hint = "Lower the sizes of the instrumented process's arrays, or give the reader more memory.";
  return e;
}

}  // namespace

region_error region_reader::impl::load_geometry() {
  const region_header& h = header();
  const std::uint64_t size = map.size();
  // Read once: every use below (strides, the text bound of read_statement) agrees
  // on it even if the header changes meanwhile.
  const std::uint64_t text_length = load_relaxed(h.max_sql_text_length);
  if (text_length > kMaxSqlTextLength)
    return corrupt("region header sizes are inconsistent",
                   "Its SQL_TEXT length " + std::to_string(text_length) + " is above the limit of " +
                       std::to_string(kMaxSqlTextLength) + " bytes.");
  for (const known_array& k : kKnownArrays) {
    const array_desc& d = h.arrays[k.id];
    const std::uint64_t offset = load_relaxed(d.offset);
    const std::uint64_t n = load_relaxed(d.count);
    const std::uint64_t stride = load_relaxed(d.stride);
    if (n == 0) continue;
    // Statement records carry their SQL_TEXT: their size follows the header.
    const std::uint64_t expected =
        k.stride != 0 ? k.stride : statement_stride_for(load_relaxed(h.max_sql_text_length));
    if (stride != expected || offset < kHeaderSize || offset % 8 != 0 || offset > size ||
        n > (size - offset) / stride)
      return corrupt("region array " + std::to_string(k.id) + " does not fit the file",
                     "Offset " + std::to_string(offset) + ", " + std::to_string(n) + " records of " +
                         std::to_string(stride) + " bytes, file of " + std::to_string(size) + " bytes.");
    arrays[k.id] = array_view{static_cast<const char*>(static_cast<const void*>(&h)) + offset, n, stride};
  }
  threads = count(kArrayThreads);
  classes = count(kArrayClasses);
  stack_depth = load_relaxed(h.wait_stack_depth);
  history_per_thread = load_relaxed(h.history_per_thread);
  history_long_batch = load_relaxed(h.history_long_batch);
  indexes_per_table = load_relaxed(h.max_indexes_per_table);
  statement_stride = statement_stride_for(static_cast<std::uint32_t>(text_length));
  max_sql_text_length = text_length;
  stage_classes = count(kArrayClassStageStats);
  memory_classes = count(kArrayClassMemoryStats);
  error_rows = count(kArrayClassErrorStats);
  statement_classes = count(kArrayClassStatementStats);
  stage_history = load_relaxed(h.stages_history_size);
  statement_stack = load_relaxed(h.statement_stack_depth);
  statement_history = load_relaxed(h.statements_history_size);
  transaction_history = load_relaxed(h.transactions_history_size);
  const bool work_consistent =
      u128{threads} * stage_history == count(kArrayStageHistory) &&
      (count(kArrayStageCurrent) == 0 || count(kArrayStageCurrent) == threads) &&
      u128{threads} * statement_stack == count(kArrayStatementCurrent) &&
      statement_stack <= kMaxStatementStack &&
      u128{threads} * statement_history == count(kArrayStatementHistory) &&
      (count(kArrayTransactionCurrent) == 0 || count(kArrayTransactionCurrent) == threads) &&
      u128{threads} * transaction_history == count(kArrayTransactionHistory) &&
      u128{threads} * stage_classes == count(kArrayThreadStageStats) &&
      u128{threads} * memory_classes == count(kArrayThreadMemoryStats) &&
      u128{threads} * error_rows == count(kArrayThreadErrorStats) &&
      (error_rows == 0 || error_rows == count(kArrayErrors) + 1) &&
      u128{threads} * count(kArrayMetrics) == count(kArrayThreadMetricValues) &&
      (count(kArrayTableLockStats) == 0 || count(kArrayTableLockStats) == count(kArrayTables)) &&
      u128{threads} * statement_classes == count(kArrayThreadStatementStats) &&
      (count(kArrayThreadTransactionStats) == 0 || count(kArrayThreadTransactionStats) == threads) &&
      (count(kArrayClassWaitHistograms) == 0 || count(kArrayClassWaitHistograms) == classes) &&
      classes <= kMaxClassesLimit;
  if (!work_consistent)
    return corrupt(
        "region header sizes are inconsistent",
        "The per-thread arrays of stages, statements and transactions do not match the thread count.");
  const bool consistent = load_relaxed(h.max_classes) == classes && load_relaxed(h.max_threads) == threads &&
                          u128{threads} * stack_depth == count(kArrayWaitStacks) &&
                          u128{threads} * history_per_thread == count(kArrayWaitHistory) &&
                          u128{threads} * classes == count(kArrayThreadClassStats) &&
                          (count(kArrayClassIo) == 0 || count(kArrayClassIo) == classes) &&
                          u128{count(kArrayTables)} * indexes_per_table == count(kArrayTableIndexes);
  if (!consistent)
    return corrupt("region header sizes are inconsistent",
                   "The per-thread array sizes do not match the thread and class counts.");
  if (threads == 0)
    stack_depth = history_per_thread = stage_history = statement_stack = statement_history =
        transaction_history = 0;
  if (count(kArrayTables) == 0) indexes_per_table = 0;
  return {};
}

// ---------------------------------------------------------------------------
// Public functions

const std::vector<table_def>& tables() noexcept {
  static const std::vector<table_def> all = [] {
    std::vector<table_def> defs;
    for (const table_entry& e : registry()) defs.push_back(e.def);
    return defs;
  }();
  return all;
}

const column_rule* find_column_rule(std::string_view name) noexcept { return column_rule_of(name); }

const table_def* find_table(std::string_view name) noexcept {
  if (name.empty()) return nullptr;
  for (const table_def& t : tables())
    if (t.name[0] == name[0] && name == t.name) return &t;  // as column_index, below
  return nullptr;
}

const table_def& table(table_id id) noexcept { return tables()[static_cast<std::size_t>(id)]; }

int column_index(const table_def& t, std::string_view name) noexcept {
  // The first letter before the whole name: a comparison with a const char* measures
  // it first (the FDW looks up every column of a table at each scan's start).
  if (name.empty()) return -1;
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    const char* column = t.columns[i].name;
    if (column[0] == name[0] && name == column) return static_cast<int>(i);
  }
  return -1;
}

region_reader::region_reader(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
region_reader::~region_reader() = default;

std::unique_ptr<region_reader> region_reader::open(const std::string& path, bool writable, region_error& err,
                                                   bool follow_symlinks) noexcept {
  try {
    err = {};
    auto p = std::make_unique<impl>();
    p->map = region_map::open(path, writable, err, follow_symlinks);
    if (err) return nullptr;
    if (!p->map.valid()) {
      err = internal_error("the region could not be mapped");
      return nullptr;
    }
    err = p->load_geometry();
    if (err) return nullptr;
    return std::unique_ptr<region_reader>(new region_reader(std::move(p)));
  } catch (const std::bad_alloc&) {
    err = out_of_memory();
  } catch (const std::exception& e) {
    err = internal_error(e.what());
  } catch (...) {
    err = internal_error("unknown error");
  }
  return nullptr;
}

namespace {
struct vector_sink final : row_sink {
  std::vector<pfs::reader::row>& out;
  explicit vector_sink(std::vector<pfs::reader::row>& o) : out(o) {}
  bool row(const cell_view* cells, std::size_t n) override {
    pfs::reader::row r(n);
    for (std::size_t k = 0; k < n; ++k) {
      r[k].null = cells[k].null;
      r[k].i = cells[k].i;
      std::uint64_t word;  // d or hi, whichever the column has
      std::memcpy(&word, &cells[k].d, sizeof word);
      std::memcpy(&r[k].d, &word, sizeof word);
      r[k].hi = word;
      r[k].s.assign(cells[k].s.data(), cells[k].s.size());
    }
    out.push_back(std::move(r));
    return true;
  }
};
}  // namespace

region_error region_reader::scan(const table_def& t, std::vector<pfs::reader::row>& out) noexcept {
  out.clear();
  vector_sink sink(out);
  region_error e = scan(t, sink);
  if (e) out.clear();
  return e;
}

region_error region_reader::scan(const table_def& t, row_sink& out) noexcept {
  scan_cursor whole;
  return scan(t, out, whole);
}

region_error region_reader::scan(const table_def& t, row_sink& out, scan_cursor& cursor) noexcept {
  try {
    if (t.id >= static_cast<std::uint32_t>(table_id::count)) return internal_error("unknown table");
    const impl& r = *impl_;
    // A file that shrinks during the scan makes the next access fault; fault_guard
    // then swaps the mapping for zeros and the scan ends on them, to be thrown away.
    fault_guard::scope guard;
    if (r.map.lost()) return changed_while_read(r.map.path());
    // A file shrunk under the mapping would fault on access: refuse to read it.
    struct stat st {};
    if (r.check_size_at_each_scan && fstat(r.map.fd(), &st) == 0 &&
        static_cast<std::uint64_t>(st.st_size) < r.map.size()) {
      region_error e = changed_while_read(r.map.path());
      e.detail = "The file has " + std::to_string(st.st_size) + " bytes, " + std::to_string(r.map.size()) +
                 " were mapped: it was truncated.";
      return e;
    }
    if (cursor.done) return {};
    scan_state s(r, out, cursor.next);
    registry()[t.id].rows(s);
    s.flush();
    if (s.paused)
      cursor.next = s.resume_position;
    else
      cursor.done = true;
    if (r.map.lost()) return changed_while_read(r.map.path());
    impl_->torn.fetch_add(s.torn, std::memory_order_relaxed);
    impl_->invalid.fetch_add(s.invalid, std::memory_order_relaxed);
    return {};
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  } catch (const std::exception& e) {
    return internal_error(e.what());
  } catch (...) {
    return internal_error("unknown error");
  }
}

std::uint64_t region_reader::estimated_rows(const table_def& t) const noexcept {
  if (t.id >= static_cast<std::uint32_t>(table_id::count)) return 0;
  return registry()[t.id].estimate(*impl_);
}

std::uint64_t region_reader::expected_rows(const table_def& t) const noexcept {
  const std::uint64_t bound = estimated_rows(t);
  if (t.id >= static_cast<std::uint32_t>(table_id::count)) return bound;
  const table_entry& e = registry()[t.id];
  return e.expected != nullptr ? e.expected(*impl_, bound) : bound;
}

std::uint64_t region_reader::torn_rows_skipped() const noexcept {
  return impl_->torn.load(std::memory_order_relaxed);
}

std::uint64_t region_reader::invalid_rows_skipped() const noexcept {
  return impl_->invalid.load(std::memory_order_relaxed);
}

std::uint32_t region_reader::find_class(std::string_view name) const noexcept {
  const impl& r = *impl_;
  if (name.size() >= kNameLen) return 0;
  for (std::uint64_t i = 0, n = r.used_classes(); i < n; ++i) {
    class_copy c;
    if (read_class(*r.at<class_record>(kArrayClasses, i), c) != rd::ok) continue;
    if (std::string_view(c.name.buf, c.name.len) == name) return static_cast<std::uint32_t>(i + 1);
  }
  return 0;
}

const region_map& region_reader::region() const noexcept { return impl_->map; }

void region_reader::check_size_at_each_scan(bool on) noexcept { impl_->check_size_at_each_scan = on; }
bool region_reader::close_file_if_provider_exited() noexcept {
  impl_->check_size_at_each_scan = false;  // it needs the file
  return impl_->map.close_file_if_provider_exited();
}

}  // namespace pfs::reader

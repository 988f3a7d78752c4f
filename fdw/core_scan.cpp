// Scans: the reader's rows of a table, filtered by the conditions pushed down from
// the query and repacked into compact pieces (fixed-size cells plus one text buffer,
// reused from piece to piece) holding only the columns the query returns, so the shim
// builds tuples without allocating per row or per value, and a backend never holds
// more than a piece of a large table.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "agent/reader/packed_rows.h"
#include "fdw/core_internal.h"

namespace pfs::fdw {
namespace {

// The C ABI's ops are the reader's, in the same order.
static_assert(static_cast<int>(reader::filter_op::eq) == PFS_QUAL_EQ &&
              static_cast<int>(reader::filter_op::in) == PFS_QUAL_IN &&
              static_cast<int>(reader::filter_op::prefix) == PFS_QUAL_PREFIX &&
              static_cast<int>(reader::filter_op::is_not_null) == PFS_QUAL_IS_NOT_NULL);

constexpr std::size_t kPollRows = 4096;  // rows between two looks at the interrupt flag
// Microseconds from 1970-01-01 to 2000-01-01 (PostgreSQL's timestamp epoch).
constexpr std::int64_t kUnixToPostgresEpochUs = 946684800LL * 1000000LL;

__extension__ typedef unsigned __int128 u128;

// The decimal digits of v (at most 39) into out; their count.
std::size_t decimal(u128 v, char* out) {
  char rev[40];
  std::size_t n = 0;
  do {
    rev[n++] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  } while (v != 0);
  for (std::size_t k = 0; k < n; ++k) out[k] = rev[n - 1 - k];
  return n;
}

bool interrupted(const volatile sig_atomic_t* flag) { return flag != nullptr && *flag != 0; }

// Rows skipped by the reader because an index inside them pointed nowhere: the
// region is damaged, and a table with rows silently missing would mislead.
void invalid_rows_error(PfsCoreError* err, const std::string& path, const reader::table_def& t,
                        std::uint64_t skipped) {
  set_error(err, PFS_CORE_CORRUPTED, "region file \"" + path + "\" contains invalid records",
            "Table \"" + std::string(t.name) + "\" has " + std::to_string(skipped) +
                (skipped == 1 ? " row that refers" : " rows that refer") +
                " to instruments that do not exist in the region.",
            "The file is damaged or was not written by a perfschema agent; restart the instrumented program "
            "to create a new region.");
}

// A piece of rows: the reader's packed rows, whose cells are the C ABI's.
using piece = reader::packed_rows;
static_assert(sizeof(reader::packed_cell) == sizeof(PfsCoreCell) &&
              offsetof(reader::packed_cell, value) == offsetof(PfsCoreCell, value) &&
              offsetof(reader::packed_cell, len) == offsetof(PfsCoreCell, len) &&
              offsetof(reader::packed_cell, null) == offsetof(PfsCoreCell, isnull));

// How the sink makes the cell of one returned column of the reader's.
enum class cell_kind : std::uint8_t { plain, float64, timestamp, text, numeric };
struct column_plan {
  std::size_t position = 0;           // in the piece's row
  std::size_t index = 0;              // the reader's cell
  cell_kind kind = cell_kind::plain;  // plain: int64 (and any NULL): value as it is
};

cell_kind kind_of(reader::column_type type) {
  switch (type) {
    case reader::column_type::float64:
      return cell_kind::float64;
    case reader::column_type::timestamp:
      return cell_kind::timestamp;
    case reader::column_type::text:
      return cell_kind::text;
    case reader::column_type::numeric:
      return cell_kind::numeric;
    default:
      return cell_kind::plain;
  }
}

// The plans of the returned columns that are the reader's (the others, the
// region's extras, are fixed cells of each region's rows).
void column_plans(const std::vector<int>& cols, const std::vector<reader::column_type>& types,
                  std::size_t reader_columns, std::vector<column_plan>& plan) {
  plan.clear();
  plan.reserve(cols.size());
  for (std::size_t k = 0; k < cols.size(); ++k)
    if (static_cast<std::size_t>(cols[k]) < reader_columns)
      plan.push_back(column_plan{k, static_cast<std::size_t>(cols[k]), kind_of(types[k])});
}

// Rows from the reader into the piece: the wait tables' builders write them packed
// themselves (sink.packed); the other tables' rows come through row(). The columns
// of a region (extras) are the piece's fixed cells.
struct piece_sink final : reader::row_sink {
  // reader_plan: column_plans(cols, types, reader_columns), made once per scan.
  piece_sink(const std::vector<int>& cols, const std::vector<reader::column_type>& types,
             const std::vector<column_plan>& reader_plan, std::size_t limit,
             const volatile sig_atomic_t* flag, piece& out, std::size_t reader_columns,
             const reader::cell_view* extra_cells)
      : plan(reader_plan), piece_bytes(limit), interrupt(flag), p(out) {
    packed = &out;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const auto col = static_cast<std::size_t>(cols[k]);
      if (col < reader_columns) continue;
      const reader::cell_view& v = extra_cells[col - reader_columns];
      p.set_fixed(k, v.null, v.i, types[k] == reader::column_type::text, v.s);
    }
  }

  bool row(const reader::cell_view* cells, std::size_t) override {
    if (p.rows() % kPollRows == 0 && interrupted(interrupt)) {
      stopped = true;
      return false;
    }
    const std::size_t n = plan.size();
    const column_plan* columns = plan.data();
    reader::packed_cell* out = p.begin_row();
    for (std::size_t k = 0; k < n; ++k) {
      const column_plan& c = columns[k];
      const reader::cell_view& v = cells[c.index];
      if (c.kind == cell_kind::plain || v.null)
        out[c.position] = reader::packed_cell{v.i, 0, v.null};
      else if (c.kind == cell_kind::text)
        out[c.position] = p.text_cell(v.s);
      else
        out[c.position] = other_cell(c.kind, v);
    }
    return true;
  }
  // A cell that is not NULL, not a plain int64 and not text: out of line, to keep
  // the per-row loop's frame small.
  [[gnu::noinline]] reader::packed_cell other_cell(cell_kind kind, const reader::cell_view& v) {
    reader::packed_cell c{v.i, 0, false};
    if (kind == cell_kind::float64) {
      std::memcpy(&c.value, &v.d, sizeof(c.value));  // a float8 Datum's bits
    } else if (kind == cell_kind::timestamp) {
      c.value = v.i - kUnixToPostgresEpochUs;
    } else if (kind == cell_kind::numeric && (v.hi != 0 || v.i < 0)) {
      // Beyond int64: decimal digits for the shim's numeric_in.
      char digits[40];
      const std::size_t n = decimal(static_cast<u128>(v.hi) << 64 | static_cast<std::uint64_t>(v.i), digits);
      const std::size_t prefix = p.text_prefix();
      const std::size_t at = p.reserve_text(piece::align8(prefix + n + 1));
      std::memcpy(p.text() + at + prefix, digits, n);
      p.text()[at + prefix + n] = '\0';
      c.value = static_cast<std::int64_t>(at);
      c.len = static_cast<std::uint32_t>(n);
    }
    return c;
  }
  // A piece ends at piece_bytes of cells and text, at kMaxPieceRows rows (a query
  // that returns no column, count(*), still reads a large table in pieces), or past
  // kRegionWindow bytes of records (a condition few rows pass maps the region a
  // window at a time). Asked every 64 records, it also looks at the interrupt flag
  // (packed rows do not pass through row()).
  bool pause(std::uint64_t region_bytes) override {
    region_bytes_passed = region_bytes;
    if (interrupted(interrupt)) {
      stopped = true;
      return true;
    }
    return p.bytes() >= piece_bytes || p.rows() >= kMaxPieceRows || region_bytes >= kRegionWindow;
  }
  static constexpr std::size_t kMaxPieceRows = 65536;
  static constexpr std::uint64_t kRegionWindow = 8u << 20;
  std::uint64_t region_bytes_passed = 0;  // as of the last pause() asked

  const std::vector<column_plan>& plan;  // per returned column of the reader's
  std::size_t piece_bytes;
  const volatile sig_atomic_t* interrupt;
  piece& p;
  bool stopped = false;
};

// One region a scan reads, with the cells of the columns appended to its rows.
struct scan_member {
  // A one-file server's mapping for the whole scan; a directory member's while the
  // scan reads it (mapped again, or taken from the mapping pool, when reached).
  std::shared_ptr<mapped_region> mapped;
  bool damaged = false;  // skipped (a status row says why)
  bool skipped = false;  // failed while read: not read again by a rescan
  std::string file;
  std::int64_t pid = 0;
  std::string program;
  reader::cell_view extras[3];  // extra_column order; views into the strings above

  void make_extras() {
    extras[kExtraProcessId] = reader::cell_view{pid == 0, pid, {}, {}};
    extras[kExtraProgram] = reader::cell_view{program.empty(), 0, program, {}};
    extras[kExtraRegionFile] = reader::cell_view{false, 0, file, {}};
  }
};

}  // namespace

}  // namespace pfs::fdw

// One scan: the regions it reads (kept mapped), what it returns, its conditions,
// where it is in the table, and the current piece.
struct PfsCoreScan {
  std::vector<pfs::fdw::scan_member> members;  // those the conditions on the extras let through
  bool directory = false;                      // skip a damaged region with a warning
  const pfs::reader::table_def* table = nullptr;
  std::size_t nreader = 0;           // the reader's columns (the extras follow)
  std::unique_ptr<bool[]> computed;  // reader columns it builds (returned or tested): the sink's wanted
  std::vector<int> columns;          // returned columns, ascending
  std::vector<pfs::reader::column_type> kinds;
  std::vector<pfs::fdw::column_plan> plan;              // of the returned columns that are the reader's
  pfs::reader::row_filter filter;                       // on the reader's columns
  std::vector<pfs::reader::column_filter> extra_tests;  // on the extras (per region)
  std::size_t piece_bytes = 0;
  std::size_t member = 0;  // the region being read
  pfs::reader::scan_cursor cursor;
  bool single_piece = false;  // the first piece was the whole table: rewind keeps it
  bool replay = false;        // rewound over a single piece: give it again
  std::unique_ptr<pfs::fdw::piece> rows;
  PfsCoreRowset view{};
  std::vector<PfsCoreError> warnings;  // regions skipped (a vector: a deque allocates when made)
  std::size_t warnings_taken = 0;
  std::size_t computed_size = 0;  // computed's length

  // As made, for the thread's next scan: the regions let go, the memory of the
  // vectors, of computed and of the members' strings kept (begin_scan writes every
  // member it reuses).
  void recycle() noexcept {
    for (pfs::fdw::scan_member& m : members) m.mapped = nullptr;
    columns.clear();
    kinds.clear();
    plan.clear();
    filter.clear();
    extra_tests.clear();
    member = 0;
    cursor = {};
    single_piece = false;
    replay = false;
    rows = nullptr;
    view = {};
    warnings.clear();
    warnings_taken = 0;
  }
};

namespace pfs::fdw {
namespace {

// The pieces of the last scans that ended, kept for the next scans of the backend
// (a backend is single-threaded): their memory is already allocated and touched,
// so a scan neither maps new pages nor copies cells while its first piece grows.
std::vector<std::unique_ptr<piece>>& spare_pieces() {
  static std::vector<std::unique_ptr<piece>> spare;
  return spare;
}
constexpr std::size_t kSparePieces = 2;  // a join of two large tables

// The scan that ended last, kept for the thread's next scan (a backend is
// single-threaded): a small scan's set-up then allocates nothing of its own (it made
// a dozen allocations, a monitoring query thousands of times).
std::unique_ptr<PfsCoreScan>& spare_scan() {
  thread_local std::unique_ptr<PfsCoreScan> spare;
  return spare;
}

std::unique_ptr<PfsCoreScan> take_scan() {
  std::unique_ptr<PfsCoreScan> s = std::move(spare_scan());
  return s != nullptr ? std::move(s) : std::make_unique<PfsCoreScan>();
}

std::unique_ptr<piece> take_piece() {
  auto& spare = spare_pieces();
  if (spare.empty()) return std::make_unique<piece>();
  std::unique_ptr<piece> p = std::move(spare.back());
  spare.pop_back();
  p->clear();
  return p;
}

void give_back(std::unique_ptr<piece> p) noexcept {
  try {
    auto& spare = spare_pieces();
    if (p != nullptr && spare.size() < kSparePieces && p->bytes() <= piece::kMaxReserve)
      spare.push_back(std::move(p));
  } catch (...) {  // out of memory for the list: the piece is freed instead
  }
}

// The damaged region's row of status: which file could not be read.
void damaged_status_row(const PfsCoreScan& s, piece_sink& sink) {
  std::vector<reader::cell_view> cells(s.nreader);
  cells[0] = reader::cell_view{false, 0, "region_damaged", {}};
  cells[1] = reader::cell_view{false, 1, {}, {}};
  if (!s.filter.matches(cells.data())) return;
  sink.row(cells.data(), cells.size());
}

// A region that failed while read: a directory's scan goes on without it (false:
// a one-file server's scan fails).
// The pages of a region a scan maps stay in the backend's resident set (and its
// VmHWM) until released (madvise: the file's pages stay in the page cache), so a
// scan of a large history would make the backend look as large as the table. The
// regions hold at most the resident budget of pages scans went past, in all, plus
// the window of the piece that crossed it; the region that has held them longest
// releases them first. Every release walks the mapping's page tables and the next
// scan faults the pages in again (a fault is expensive on a virtual machine that
// shadows page tables: a scan of 1,000 regions of 1,000 waits took 5 times as long
// with a budget of 40 MiB as with none), hence a budget over all regions, large
// enough for a directory's records, rather than a release per piece or per region.
std::uint64_t resident_budget = std::uint64_t{256} << 20;

struct resident_pages {
  std::deque<std::weak_ptr<mapped_region>> holders;  // oldest first; each once
  std::uint64_t bytes = 0;                           // their unreleased_bytes
};
resident_pages& resident() noexcept {
  static resident_pages r;
  return r;
}

void bound_resident_pages(const std::shared_ptr<mapped_region>& r, std::uint64_t bytes) {
  if (bytes == 0) return;
  resident_pages& all = resident();
  if (r->unreleased_bytes == 0) all.holders.push_back(r);
  r->unreleased_bytes += bytes;
  all.bytes += bytes;
  while (all.bytes >= resident_budget && !all.holders.empty()) {
    const std::shared_ptr<mapped_region> h = all.holders.front().lock();
    all.holders.pop_front();
    if (h == nullptr || h->unreleased_bytes == 0) continue;
    h->reader->region().release_resident_pages();
    all.bytes -= h->unreleased_bytes;
    h->unreleased_bytes = 0;
  }
}

}  // namespace

mapped_region::~mapped_region() {
  // The mapping goes with the reader, a member destroyed after this body: the
  // pages it held are no longer the backend's.
  resident_pages& all = resident();
  all.bytes -= std::min(all.bytes, unreleased_bytes);
}

namespace {

// A directory scan lets a member's mapping go once past it: the mapping pool keeps
// it, or it is unmapped (a directory of more files than the pool's limit).
void leave_member(PfsCoreScan& s) {
  if (s.directory) s.members[s.member].mapped = nullptr;
  ++s.member;
  s.cursor = {};
}

bool skip_member(PfsCoreScan& s, const PfsCoreError& why) {
  if (!s.directory) return false;
  s.warnings.push_back(skip_warning(s.members[s.member].file, why));
  s.members[s.member].skipped = true;
  leave_member(s);
  return true;
}

// The mapping of the directory member a scan reaches: the pool's (unless a fault
// replaced it), else the file mapped now. nullptr and why when it cannot be read.
std::shared_ptr<mapped_region> map_member(const scan_member& m, PfsCoreError& why) {
  std::shared_ptr<mapped_region> r = kept_mapping(m.file);
  if (r != nullptr && !r->reader->region().lost()) return r;
  if (r != nullptr) drop_mapping(m.file);
  region_error e;
  r = open_region(m.file, e);
  if (r == nullptr) {
    set_error(&why, e);
    return nullptr;
  }
  keep_mapping(r, false);
  return r;
}

PfsCoreScan* begin_scan(PfsCoreRegion& region, const reader::table_def& t, const bool* wanted,
                        const PfsCoreQual* quals, int nquals, std::size_t text_prefix,
                        std::size_t piece_bytes) {
  std::unique_ptr<PfsCoreScan> s = take_scan();
  s->directory = region.directory;
  s->table = &t;
  s->piece_bytes = piece_bytes == 0 ? 1 : piece_bytes;
  s->nreader = t.columns.size();
  const std::size_t n = s->nreader, all = n + static_cast<std::size_t>(extra_column_count(t));
  if (s->computed_size < std::max<std::size_t>(n, 1)) {
    s->computed_size = std::max<std::size_t>(n, 1);
    s->computed.reset(new bool[s->computed_size]);
  }
  std::fill_n(s->computed.get(), s->computed_size, false);
  s->columns.reserve(all);
  s->kinds.reserve(all);
  for (std::size_t c = 0; c < all; ++c)
    if (wanted == nullptr || wanted[c]) {
      s->columns.push_back(static_cast<int>(c));
      const reader::column_type type =
          c < n ? t.columns[c].type
                : (c - n == kExtraProcessId ? reader::column_type::int64 : reader::column_type::text);
      s->kinds.push_back(type);
      if (c < n) s->computed[c] = true;
    }
  column_plans(s->columns, s->kinds, n, s->plan);
  for (int q = 0; q < nquals; ++q) {
    const PfsCoreQual& in = quals[q];
    reader::column_filter f;
    f.column = in.column;
    f.op = static_cast<reader::filter_op>(in.op);
    f.text = in.text;
    for (int k = 0; k < in.noperands; ++k) {
      if (in.text)
        f.texts.emplace_back(in.texts[k], in.lens[k]);
      else
        f.ints.push_back(in.ints[k]);
    }
    if (static_cast<std::size_t>(in.column) >= n) {
      if (f.op == reader::filter_op::in) {  // sorted and unique, as row_filter::add makes them
        std::sort(f.ints.begin(), f.ints.end());
        f.ints.erase(std::unique(f.ints.begin(), f.ints.end()), f.ints.end());
        std::sort(f.texts.begin(), f.texts.end());
        f.texts.erase(std::unique(f.texts.begin(), f.texts.end()), f.texts.end());
      }
      f.column -= static_cast<int>(n);
      s->extra_tests.push_back(std::move(f));
      continue;
    }
    s->computed[static_cast<std::size_t>(in.column)] = true;
    s->filter.add(std::move(f));
  }
  const bool status = t.id == static_cast<std::uint32_t>(reader::table_id::status);
  s->members.reserve(region.members.size());
  std::size_t kept = 0;  // members made so far, in the elements of the last scan first
  for (const region_member& rm : region.members) {
    if (rm.damaged) s->warnings.push_back(rm.damage);
    if (rm.damaged && !status) continue;
    scan_member& m = kept < s->members.size() ? s->members[kept] : s->members.emplace_back();
    ++kept;
    m.damaged = rm.damaged;
    m.skipped = false;
    m.mapped = rm.damaged ? nullptr : rm.region;
    m.pid = rm.damaged ? 0 : rm.pid;
    if (rm.damaged)
      m.program.clear();
    else
      m.program = rm.program;
    m.file = rm.file;
  }
  s->members.resize(kept);
  // The extras' cells point into the members' strings: made once the vector is final.
  std::erase_if(s->members, [&](scan_member& m) {
    m.make_extras();
    for (const reader::column_filter& f : s->extra_tests)
      if (!f.matches(m.extras[f.column])) return true;
    return false;
  });
  for (scan_member& m : s->members) m.make_extras();  // erase_if moved some
  s->rows = take_piece();
  s->rows->set_layout(s->columns, n, text_prefix);
  s->rows->reserve(s->piece_bytes);
  return s.release();
}

const PfsCoreRowset* next_piece(PfsCoreScan& s, const volatile sig_atomic_t* interrupt, PfsCoreError* err) {
  if (s.replay) {
    s.replay = false;
    return &s.view;
  }
  s.rows->clear();
  const std::size_t start_member = s.member;
  const reader::scan_cursor start_cursor = s.cursor;
  auto fail = [&](const PfsCoreError& why) -> const PfsCoreRowset* {
    s.member = start_member;  // the piece is read again on the next call
    s.cursor = start_cursor;
    s.rows->clear();
    *err = why;
    return nullptr;
  };
  while (s.member < s.members.size() && s.rows->bytes() < s.piece_bytes) {
    scan_member& m = s.members[s.member];
    piece_sink sink(s.columns, s.kinds, s.plan, s.piece_bytes, interrupt, *s.rows, s.nreader, m.extras);
    sink.wanted = s.computed.get();
    sink.filter = s.filter.empty() ? nullptr : &s.filter;
    if (m.damaged) {  // a damaged region: its status row
      if (!s.filter.rejects_all()) damaged_status_row(s, sink);
      leave_member(s);
      continue;
    }
    if (m.skipped) {
      leave_member(s);
      continue;
    }
    if (m.mapped == nullptr) {
      PfsCoreError why{};
      m.mapped = map_member(m, why);
      if (m.mapped == nullptr) {
        if (!skip_member(s, why)) return fail(why);
        continue;
      }
    }
    reader::region_reader& r = *m.mapped->reader;
    const std::uint64_t invalid_before = r.invalid_rows_skipped();
    region_error e = s.filter.rejects_all() ? region_error{} : r.scan(*s.table, sink, s.cursor);
    if (s.filter.rejects_all()) s.cursor.done = true;
    bound_resident_pages(m.mapped, sink.region_bytes_passed);
    if (!e && sink.stopped) {
      PfsCoreError why{};
      set_error(&why, PFS_CORE_INTERRUPTED, "scan interrupted");
      return fail(why);
    }
    if (e) {
      PfsCoreError why{};
      set_error(&why, e);
      if (!skip_member(s, why)) return fail(why);
      continue;
    }
    if (const std::uint64_t skipped = r.invalid_rows_skipped() - invalid_before; skipped != 0) {
      PfsCoreError why{};
      invalid_rows_error(&why, m.file, *s.table, skipped);
      if (!skip_member(s, why)) return fail(why);
      continue;
    }
    if (!s.cursor.done) break;  // the piece is full
    leave_member(s);
  }
  const bool done = s.member >= s.members.size();
  if (start_member == 0 && start_cursor.next == 0 && !start_cursor.done && done) s.single_piece = true;
  PfsCoreRowset& v = s.view;
  v.nrows = s.rows->rows();
  v.ncells = static_cast<int>(s.columns.size());
  v.columns = s.columns.data();
  v.cells = reinterpret_cast<const PfsCoreCell*>(s.rows->cells());
  v.text = s.rows->text();
  v.last = done;
  return &v;
}

}  // namespace
}  // namespace pfs::fdw

extern "C" {

PfsCoreScan* pfs_core_scan_begin(PfsCoreRegion* region, int table, const bool* wanted,
                                 const PfsCoreQual* quals, int nquals, size_t text_prefix, size_t piece_bytes,
                                 PfsCoreError* err) noexcept {
  using namespace pfs::fdw;
  clear_error(err);
  const pfs::reader::table_def* t = table_at(table);
  bool valid = region != nullptr && t != nullptr && nquals >= 0 && (nquals == 0 || quals != nullptr);
  for (int q = 0; valid && q < nquals; ++q) {
    const PfsCoreQual& in = quals[q];
    const bool null_test = in.op == PFS_QUAL_IS_NULL || in.op == PFS_QUAL_IS_NOT_NULL;
    valid =
        pfs_core_qual_supported(table, in.column, in.op) && in.noperands >= 0 &&
        (null_test || in.text == (pfs_core_column_type(table, in.column) == PFS_CORE_TEXT)) &&
        (in.noperands == 0 || (in.text ? in.texts != nullptr && in.lens != nullptr : in.ints != nullptr)) &&
        (null_test || in.op == PFS_QUAL_IN || in.noperands == 1);
  }
  if (!valid) {
    set_error(err, PFS_CORE_INTERNAL, "invalid scan request");
    return nullptr;
  }
  return guarded(err, static_cast<PfsCoreScan*>(nullptr),
                 [&] { return begin_scan(*region, *t, wanted, quals, nquals, text_prefix, piece_bytes); });
}

const PfsCoreRowset* pfs_core_scan_next(PfsCoreScan* scan, const volatile sig_atomic_t* interrupt,
                                        PfsCoreError* err) noexcept {
  using namespace pfs::fdw;
  clear_error(err);
  if (scan == nullptr) {
    set_error(err, PFS_CORE_INTERNAL, "invalid scan request");
    return nullptr;
  }
  return guarded(err, static_cast<const PfsCoreRowset*>(nullptr),
                 [&] { return next_piece(*scan, interrupt, err); });
}

void pfs_core_scan_rewind(PfsCoreScan* scan) noexcept {
  if (scan == nullptr) return;
  if (scan->single_piece) {  // given again as it is
    scan->replay = true;
    return;
  }
  scan->member = 0;
  scan->cursor = {};
  scan->rows->clear();
}

bool pfs_core_scan_warning(PfsCoreScan* scan, PfsCoreError* warning) noexcept {
  if (scan == nullptr || scan->warnings_taken == scan->warnings.size()) return false;
  *warning = scan->warnings[scan->warnings_taken++];
  return true;
}

void pfs_core_scan_end(PfsCoreScan* scan) noexcept {
  if (scan == nullptr) return;
  pfs::fdw::give_back(std::move(scan->rows));
  std::unique_ptr<PfsCoreScan>& spare = pfs::fdw::spare_scan();
  if (spare == nullptr) {
    scan->recycle();
    spare.reset(scan);
  } else {
    delete scan;
  }
}

bool pfs_core_qual_supported(int table, int column, PfsCoreQualOp op) noexcept {
  using pfs::reader::column_type;
  const pfs::reader::table_def* t = pfs::fdw::table_at(table);
  if (t == nullptr || column < 0 || column >= pfs_core_column_count(table)) return false;
  if (op == PFS_QUAL_IS_NULL || op == PFS_QUAL_IS_NOT_NULL) return true;
  switch (pfs_core_column_type(table, column)) {
    case PFS_CORE_INT64:
      return op != PFS_QUAL_PREFIX;
    case PFS_CORE_TEXT:
      return op == PFS_QUAL_EQ || op == PFS_QUAL_IN || op == PFS_QUAL_PREFIX;
    default:
      return false;
  }
}

}  // extern "C"

extern "C" void pfs_core_set_resident_budget(uint64_t bytes) noexcept { pfs::fdw::resident_budget = bytes; }

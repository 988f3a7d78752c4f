// Scans: the reader's consistent copy of a table, repacked into one compact row set
// (fixed-size cells plus one text buffer) holding only the columns the query needs,
// so the shim builds tuples without allocating per row or per value.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fdw/core_internal.h"

namespace pfs::fdw {
namespace {

constexpr std::size_t kPollRows = 4096;  // rows between two looks at the interrupt flag

struct rowset_impl : PfsCoreRowset {
  std::vector<int> column_list;
  std::vector<PfsCoreCell> cell_list;
  std::unique_ptr<char[]> text_buffer;
};

constexpr std::size_t align8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

bool interrupted(const volatile sig_atomic_t* flag) { return flag != nullptr && *flag != 0; }

// Rows skipped by the reader because an index inside them pointed nowhere: the
// region is damaged, and a table with rows silently missing would mislead.
void invalid_rows_error(PfsCoreError* err, const PfsCoreRegion& region, const reader::table_def& t,
                        std::uint64_t skipped) {
  set_error(err, PFS_CORE_CORRUPTED, "region file \"" + region.path + "\" contains invalid records",
            "Table \"" + std::string(t.name) + "\" has " + std::to_string(skipped) +
                (skipped == 1 ? " row that refers" : " rows that refer") +
                " to instruments that do not exist in the region.",
            "The file is damaged or was not written by a perfschema agent; restart the instrumented program "
            "to create a new region.");
}

// Rows straight from the reader's sink into the row set.
struct rowset_sink final : reader::row_sink {
  rowset_sink(const reader::table_def& t, std::size_t prefix, const volatile sig_atomic_t* flag,
              rowset_impl& out)
      : def(t), text_prefix(prefix), interrupt(flag), rs(out) {
    for (int c : rs.column_list) {
      text.push_back(def.columns[static_cast<std::size_t>(c)].type == reader::column_type::text);
      kind.push_back(def.columns[static_cast<std::size_t>(c)].type);
    }
  }
  ~rowset_sink() { std::free(buf); }

  bool row(const reader::cell_view* cells, std::size_t) override {
    if (nrows % kPollRows == 0 && interrupted(interrupt)) {
      stopped = true;
      return false;
    }
    for (std::size_t k = 0; k < rs.column_list.size(); ++k) {
      const reader::cell_view& v = cells[rs.column_list[k]];
      PfsCoreCell c{v.i, 0, v.null};
      if (!v.null && kind[k] == reader::column_type::float64) {
        std::memcpy(&c.value, &v.d, sizeof(c.value));  // a float8 Datum's bits
      } else if (!v.null && kind[k] == reader::column_type::timestamp) {
        c.value = v.i - kUnixToPostgresEpochUs;
      } else if (!v.null && text[k]) {
        const std::size_t need = align8(text_prefix + v.s.size());
        if (used + need > cap) grow(used + need);
        if (!v.s.empty()) std::memcpy(buf + used + text_prefix, v.s.data(), v.s.size());
        c.value = static_cast<std::int64_t>(used);
        c.len = static_cast<std::uint32_t>(v.s.size());
        used += need;
      }
      rs.cell_list.push_back(c);
    }
    ++nrows;
    return true;
  }
  void grow(std::size_t min) {
    std::size_t n = cap == 0 ? 4096 : cap * 2;
    while (n < min) n *= 2;
    char* p = static_cast<char*>(std::realloc(buf, n));
    if (p == nullptr) throw std::bad_alloc();
    buf = p;
    cap = n;
  }
  // Moves the text into rs (as a unique_ptr<char[]> would not match realloc, copy once).
  void finish() {
    rs.text_buffer.reset(new char[used == 0 ? 1 : used]);
    if (used != 0) std::memcpy(rs.text_buffer.get(), buf, used);
    rs.nrows = nrows;
    rs.ncells = static_cast<int>(rs.column_list.size());
    rs.columns = rs.column_list.data();
    rs.cells = rs.cell_list.data();
    rs.text = rs.text_buffer.get();
  }

  const reader::table_def& def;
  std::size_t text_prefix;
  const volatile sig_atomic_t* interrupt;
  rowset_impl& rs;
  std::vector<bool> text;
  std::vector<reader::column_type> kind;
  // Microseconds from 1970-01-01 to 2000-01-01 (PostgreSQL's timestamp epoch).
  static constexpr std::int64_t kUnixToPostgresEpochUs = 946684800LL * 1000000LL;
  char* buf = nullptr;
  std::size_t used = 0, cap = 0, nrows = 0;
  bool stopped = false;
};

PfsCoreRowset* scan(PfsCoreRegion& region, const reader::table_def& t, const bool* wanted,
                    std::size_t text_prefix, const volatile sig_atomic_t* interrupt, PfsCoreError* err) {
  auto rs = std::make_unique<rowset_impl>();
  for (std::size_t c = 0; c < t.columns.size(); ++c)
    if (wanted == nullptr || wanted[c]) rs->column_list.push_back(static_cast<int>(c));

  reader::region_reader& reader = *region.reader;
  rs->cell_list.reserve(reader.estimated_rows(t) * rs->column_list.size());
  const std::uint64_t invalid_before = reader.invalid_rows_skipped();
  rowset_sink sink(t, text_prefix, interrupt, *rs);
  sink.wanted = wanted;
  if (region_error e = reader.scan(t, sink)) {
    set_error(err, e);
    return nullptr;
  }
  if (sink.stopped) {
    set_error(err, PFS_CORE_INTERRUPTED, "scan interrupted");
    return nullptr;
  }
  if (const std::uint64_t skipped = reader.invalid_rows_skipped() - invalid_before; skipped != 0) {
    invalid_rows_error(err, region, t, skipped);
    return nullptr;
  }
  sink.finish();
  return rs.release();
}

}  // namespace
}  // namespace pfs::fdw

extern "C" {

PfsCoreRowset* pfs_core_scan(PfsCoreRegion* region, int table, const bool* wanted, size_t text_prefix,
                             const volatile sig_atomic_t* interrupt, PfsCoreError* err) noexcept {
  using namespace pfs::fdw;
  clear_error(err);
  const pfs::reader::table_def* t = table_at(table);
  if (region == nullptr || t == nullptr) {
    set_error(err, PFS_CORE_INTERNAL, "invalid scan request");
    return nullptr;
  }
  return guarded(err, static_cast<PfsCoreRowset*>(nullptr),
                 [&] { return scan(*region, *t, wanted, text_prefix, interrupt, err); });
}

void pfs_core_rowset_free(PfsCoreRowset* rowset) noexcept {
  delete static_cast<pfs::fdw::rowset_impl*>(rowset);
}

}  // extern "C"

// Scans: the reader's consistent copy of a table, repacked into one compact row set
// (fixed-size cells plus one text buffer) holding only the columns the query needs,
// so the shim builds tuples without allocating per row or per value.
#include <cstdint>
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

// Repacks rows into rs: cells for the wanted columns, text into one buffer.
bool repack(const reader::table_def& t, std::vector<reader::row>& rows, std::size_t text_prefix,
            const volatile sig_atomic_t* interrupt, rowset_impl& rs) {
  const std::size_t ncells = rs.column_list.size();
  std::size_t text_bytes = 0;
  for (const reader::row& r : rows)
    for (int c : rs.column_list)
      if (t.columns[static_cast<std::size_t>(c)].type == reader::column_type::text && !r[c].null)
        text_bytes += align8(text_prefix + r[c].s.size());
  rs.cell_list.resize(rows.size() * ncells);
  rs.text_buffer.reset(new char[text_bytes == 0 ? 1 : text_bytes]);

  PfsCoreCell* cell = rs.cell_list.data();
  std::size_t offset = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i % kPollRows == 0 && interrupted(interrupt)) return false;
    reader::row& r = rows[i];
    for (int c : rs.column_list) {
      const reader::cell& v = r[static_cast<std::size_t>(c)];
      cell->isnull = v.null;
      cell->len = 0;
      cell->value = v.i;
      if (!v.null && t.columns[static_cast<std::size_t>(c)].type == reader::column_type::text) {
        cell->value = static_cast<std::int64_t>(offset);
        cell->len = static_cast<std::uint32_t>(v.s.size());
        std::memcpy(rs.text_buffer.get() + offset + text_prefix, v.s.data(), v.s.size());
        offset += align8(text_prefix + v.s.size());
      }
      ++cell;
    }
    reader::row().swap(r);  // give the copy back as we go: keeps the peak lower
  }
  rs.nrows = rows.size();
  rs.ncells = static_cast<int>(ncells);
  rs.columns = rs.column_list.data();
  rs.cells = rs.cell_list.data();
  rs.text = rs.text_buffer.get();
  return true;
}

PfsCoreRowset* scan(PfsCoreRegion& region, const reader::table_def& t, const bool* wanted,
                    std::size_t text_prefix, const volatile sig_atomic_t* interrupt, PfsCoreError* err) {
  auto rs = std::make_unique<rowset_impl>();
  for (std::size_t c = 0; c < t.columns.size(); ++c)
    if (wanted == nullptr || wanted[c]) rs->column_list.push_back(static_cast<int>(c));

  reader::region_reader& reader = *region.reader;
  const std::uint64_t invalid_before = reader.invalid_rows_skipped();
  std::vector<reader::row> rows;
  if (region_error e = reader.scan(t, rows)) {
    set_error(err, e);
    return nullptr;
  }
  if (const std::uint64_t skipped = reader.invalid_rows_skipped() - invalid_before; skipped != 0) {
    invalid_rows_error(err, region, t, skipped);
    return nullptr;
  }
  if (!repack(t, rows, text_prefix, interrupt, *rs)) {
    set_error(err, PFS_CORE_INTERRUPTED, "scan interrupted");
    return nullptr;
  }
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

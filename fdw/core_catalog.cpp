// The table catalogue of the C ABI (straight from pfs::reader::tables(), so tables
// added to the reader appear in IMPORT FOREIGN SCHEMA without changes here, plus the
// columns the core appends to each: the process that wrote the row) and the error
// helpers shared by the core.
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "fdw/core_internal.h"

namespace pfs::fdw {
namespace {

// Copies s into a fixed buffer, cut at a UTF-8 character boundary.
template <std::size_t N>
void copy_text(char (&out)[N], std::string_view s) noexcept {
  std::size_t n = s.size() < N ? s.size() : N - 1;
  if (n < s.size())
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  if (n != 0) std::memcpy(out, s.data(), n);
  out[n] = '\0';
}

// The appended columns (extra_column order): who wrote the row. Nullable: a damaged
// region's status row knows neither, a region of an older agent no program.
const reader::column_def kExtraColumns[] = {
    {"process_id", reader::column_type::int64, true},
    {"program", reader::column_type::text, true},
    {"region_file", reader::column_type::text, true},
};

const reader::column_def* column_at(int table, int column) noexcept {
  const reader::table_def* t = table_at(table);
  if (t == nullptr || column < 0) return nullptr;
  const std::size_t c = static_cast<std::size_t>(column);
  if (c < t->columns.size()) return &t->columns[c];
  if (c - t->columns.size() < static_cast<std::size_t>(extra_column_count(*t)))
    return &kExtraColumns[c - t->columns.size()];
  return nullptr;
}

PfsCoreErrorKind kind_of(region_errc code) noexcept {
  switch (code) {
    case region_errc::ok:
      return PFS_CORE_OK;
    case region_errc::not_found:
      return PFS_CORE_FILE_NOT_FOUND;
    case region_errc::permission:
      return PFS_CORE_PERMISSION;
    case region_errc::too_small:
    case region_errc::bad_magic:
    case region_errc::corrupt:
      return PFS_CORE_CORRUPTED;
    case region_errc::bad_version:
      return PFS_CORE_BAD_VERSION;
    case region_errc::changed:
      return PFS_CORE_CHANGED;
    case region_errc::not_regular:
    case region_errc::unsafe:  // a symbolic link or hard link where a region file was expected
      return PFS_CORE_WRONG_TYPE;
    case region_errc::io:
    case region_errc::in_use:
      break;
  }
  return PFS_CORE_IO;
}

}  // namespace

void clear_error(PfsCoreError* err) noexcept {
  if (err == nullptr) return;
  err->kind = PFS_CORE_OK;
  err->message[0] = err->detail[0] = err->hint[0] = '\0';
}

void set_error(PfsCoreError* err, PfsCoreErrorKind kind, std::string_view message, std::string_view detail,
               std::string_view hint) noexcept {
  if (err == nullptr) return;
  err->kind = kind;
  copy_text(err->message, message);
  copy_text(err->detail, detail);
  copy_text(err->hint, hint);
}

void set_error(PfsCoreError* err, const region_error& e) noexcept {
  set_error(err, kind_of(e.code), e.message, e.detail, e.hint);
}

int extra_column_count(const reader::table_def& t) noexcept {
  return t.id == static_cast<std::uint32_t>(reader::table_id::status) ? 3 : 2;
}

PfsCoreError skip_warning(const std::string& file, const PfsCoreError& why) noexcept {
  PfsCoreError w{};
  try {
    std::string reason = why.message;
    if (!reason.empty() && reason[0] >= 'a' && reason[0] <= 'z')
      reason[0] = static_cast<char>(reason[0] - 'a' + 'A');
    reason += '.';
    if (why.detail[0] != '\0') reason += std::string(" ") + why.detail;
    set_error(&w, why.kind, "skipping region file \"" + file + "\"", reason, why.hint);
  } catch (...) {  // out of memory: the reason alone
    w = why;
  }
  return w;
}

const reader::table_def* table_at(int table) noexcept {
  const auto& all = reader::tables();
  if (table < 0 || static_cast<std::size_t>(table) >= all.size()) return nullptr;
  return &all[static_cast<std::size_t>(table)];
}

}  // namespace pfs::fdw

using pfs::fdw::column_at;
using pfs::fdw::table_at;

extern "C" {

bool pfs_core_init(void) noexcept { return !pfs::reader::tables().empty(); }

int pfs_core_table_count(void) noexcept { return static_cast<int>(pfs::reader::tables().size()); }

const char* pfs_core_table_name(int table) noexcept {
  const pfs::reader::table_def* t = table_at(table);
  return t != nullptr ? t->name : nullptr;
}

int pfs_core_table_find(const char* name) noexcept {
  if (name == nullptr) return -1;
  const pfs::reader::table_def* t = pfs::reader::find_table(name);
  return t != nullptr ? static_cast<int>(t - pfs::reader::tables().data()) : -1;
}

int pfs_core_column_count(int table) noexcept {
  const pfs::reader::table_def* t = table_at(table);
  return t != nullptr ? static_cast<int>(t->columns.size()) + pfs::fdw::extra_column_count(*t) : 0;
}

int pfs_core_extra_column_count(int table) noexcept {
  const pfs::reader::table_def* t = table_at(table);
  return t != nullptr ? pfs::fdw::extra_column_count(*t) : 0;
}

const char* pfs_core_column_name(int table, int column) noexcept {
  const pfs::reader::column_def* c = column_at(table, column);
  return c != nullptr ? c->name : nullptr;
}

PfsCoreColumnType pfs_core_column_type(int table, int column) noexcept {
  const pfs::reader::column_def* c = column_at(table, column);
  if (c == nullptr) return PFS_CORE_INT64;
  switch (c->type) {
    case pfs::reader::column_type::text:
      return PFS_CORE_TEXT;
    case pfs::reader::column_type::float64:
      return PFS_CORE_FLOAT8;
    case pfs::reader::column_type::timestamp:
      return PFS_CORE_TIMESTAMPTZ;
    case pfs::reader::column_type::numeric:
      return PFS_CORE_NUMERIC;
    case pfs::reader::column_type::int64:
      break;
  }
  return PFS_CORE_INT64;
}

const PfsCoreColumnType* pfs_core_column_types(int table) noexcept {
  // Made once for every table (the registry never changes): a scan's start reads
  // its columns' types from an array, not through a lookup per column.
  static const std::vector<std::vector<PfsCoreColumnType>>* all = [] {
    auto* types = new (std::nothrow) std::vector<std::vector<PfsCoreColumnType>>();
    if (types == nullptr) return types;
    try {
      types->resize(pfs::reader::tables().size());
      for (int t = 0; t < static_cast<int>(types->size()); ++t)
        for (int c = 0; c < pfs_core_column_count(t); ++c) (*types)[t].push_back(pfs_core_column_type(t, c));
    } catch (...) {
      delete types;
      return static_cast<std::vector<std::vector<PfsCoreColumnType>>*>(nullptr);
    }
    return types;
  }();
  if (all == nullptr || table < 0 || static_cast<std::size_t>(table) >= all->size()) return nullptr;
  return (*all)[static_cast<std::size_t>(table)].data();
}

bool pfs_core_column_nullable(int table, int column) noexcept {
  const pfs::reader::column_def* c = column_at(table, column);
  return c == nullptr || c->nullable;
}

int pfs_core_column_find(int table, const char* name) noexcept {
  const pfs::reader::table_def* t = table_at(table);
  if (t == nullptr || name == nullptr) return -1;
  const int c = pfs::reader::column_index(*t, name);
  if (c >= 0) return c;
  for (int k = 0; k < pfs::fdw::extra_column_count(*t); ++k)
    if (std::strcmp(pfs::fdw::kExtraColumns[k].name, name) == 0)
      return static_cast<int>(t->columns.size()) + k;
  return -1;
}

}  // extern "C"

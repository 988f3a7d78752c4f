// Row builder of table_lock_waits_summary_by_table (MySQL 8.0's table_tlws_by_table.cc).
#include "agent/reader/internal/reader_internal.h"
#include "agent/region/io_layout.h"
#include "agent/region/lock_layout.h"

namespace pfs::reader::detail {

namespace {

// The kinds in the table's column order (MySQL's: the read kinds, then the write
// kinds; PFS_TL_LOCK_TYPE puts the external ones last).
constexpr table_lock_kind kReadKinds[] = {kTableLockRead, kTableLockReadWithSharedLocks,
                                          kTableLockReadHighPriority, kTableLockReadNoInsert,
                                          kTableLockReadExternal};
constexpr table_lock_kind kWriteKinds[] = {kTableLockWriteAllowWrite, kTableLockWriteConcurrentInsert,
                                           kTableLockWriteLowPriority, kTableLockWrite,
                                           kTableLockWriteExternal};

}  // namespace

void rows_table_lock_by_table(scan_state& s) {
  if (s.r.count(kArrayTableLockStats) != s.r.count(kArrayTables)) return;
  table_copy t;
  wait_stat kinds[kTableLockKinds];
  for (std::uint64_t i = 0; i < s.r.count(kArrayTables); ++i) {
    const table_share& rec = *s.r.at<table_share>(kArrayTables, i);
    const table_lock_stat& locks = *s.r.at<table_lock_stat>(kArrayTableLockStats, i);
    if (!s.accept(read_versioned(rec, [&](const table_share& sh) {
          copy_table(s.r, i, sh, t, false);
          for (int k = 0; k < kTableLockKinds; ++k) kinds[k] = load_stat(locks.kinds[k]);
        })))
      continue;
    const char* type = object_type_name(t.object_type);
    if (type == nullptr) {
      ++s.invalid;
      continue;
    }
    wait_stat read = kZeroStat, write = kZeroStat;
    for (table_lock_kind k : kReadKinds) merge_stat(read, kinds[k]);
    for (table_lock_kind k : kWriteKinds) merge_stat(write, kinds[k]);
    wait_stat star = read;
    merge_stat(star, write);
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view(type)));
    x.push_back(s.text_cell(t.schema.str()));
    x.push_back(s.text_cell(t.name.str()));
    append_stat_cells(x, star);
    append_stat_cells(x, read);
    append_stat_cells(x, write);
    for (table_lock_kind k : kReadKinds) append_stat_cells(x, kinds[k]);
    for (table_lock_kind k : kWriteKinds) append_stat_cells(x, kinds[k]);
  }
}

}  // namespace pfs::reader::detail

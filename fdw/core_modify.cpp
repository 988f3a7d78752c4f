// The C ABI of the write path (pfs_core.h): setup changes from SQL, kept as a
// per-backend log of pending changes until the transaction commits. The work is done
// by the core_write_*.cpp files (see core_write.h).
#include "fdw/core_write.h"

// ---------------------------------------------------------------------------
// The C ABI

extern "C" {

int pfs_core_table_operations(int table) noexcept {
  const pfs::fdw::write::table_rules* r = pfs::fdw::write::rules_of(table);
  return r != nullptr ? r->ops : 0;
}

bool pfs_core_overlay_changes_values(int table) noexcept {
  using namespace pfs::reader;
  const pfs::reader::table_def* t = pfs::fdw::table_at(table);
  if (t == nullptr) return true;
  constexpr std::uint64_t kHides = kHideCurrent | kHideHistory | kHideHistoryLong | kHideStages |
                                   kHideStagesHistory | kHideStagesHistoryLong | kHideStatements |
                                   kHideStatementsHistory | kHideStatementsHistoryLong | kHideTransactions |
                                   kHideTransactionsHistory | kHideTransactionsHistoryLong;
  return (t->writes.ops & (kWriteUpdate | kWriteInsert)) != 0 || (t->writes.seen & ~kHides) != 0;
}

bool pfs_core_column_updatable(int table, int column) noexcept {
  const pfs::fdw::write::table_rules* r = pfs::fdw::write::rules_of(table);
  const pfs::reader::table_def* t = pfs::fdw::table_at(table);
  if (r == nullptr || t == nullptr || column < 0 || static_cast<std::size_t>(column) >= t->columns.size())
    return false;
  return pfs::fdw::write::listed(r->updatable, t->columns[static_cast<std::size_t>(column)].name);
}

bool pfs_core_column_is_key(int table, int column) noexcept {
  const pfs::fdw::write::table_rules* r = pfs::fdw::write::rules_of(table);
  const pfs::reader::table_def* t = pfs::fdw::table_at(table);
  if (r == nullptr || t == nullptr || column < 0 || static_cast<std::size_t>(column) >= t->columns.size())
    return false;
  return pfs::fdw::write::listed(r->keys, t->columns[static_cast<std::size_t>(column)].name);
}

bool pfs_core_write_check(const char* path, PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  using namespace pfs::fdw::write;
  clear_write_error(err);
  if (path == nullptr) {
    set_error(&err->error, PFS_CORE_INTERNAL, "no region path given");
    return false;
  }
  return guarded(&err->error, false, [&] {
    if (is_region_directory(path)) return true;  // each region is checked when a change names it
    return writable_region(path, err) != nullptr;
  });
}

bool pfs_core_write_update(const char* path, int table, const PfsCoreValue* old_row, PfsCoreValue* new_row,
                           const bool* set, int level, std::uint32_t cid, PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  using namespace pfs::fdw::write;
  clear_write_error(err);
  return guarded(&err->error, false, [&] {
    return is_region_directory(path) ? directory_update(path, table, old_row, new_row, set, level, cid, err)
                                     : update_row(path, table, old_row, new_row, set, level, cid, err);
  });
}

bool pfs_core_write_insert(const char* path, int table, PfsCoreValue* row, const bool* named,
                           bool skip_duplicate, bool* skipped, int level, std::uint32_t cid,
                           PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  using namespace pfs::fdw::write;
  clear_write_error(err);
  return guarded(&err->error, false, [&] {
    return is_region_directory(path)
               ? directory_insert(path, table, row, named, skip_duplicate, skipped, level, cid, err)
               : insert_row(path, table, row, named, skip_duplicate, skipped, level, cid, err);
  });
}

bool pfs_core_write_delete(const char* path, int table, const PfsCoreValue* old_row, int level,
                           std::uint32_t cid, PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  using namespace pfs::fdw::write;
  clear_write_error(err);
  return guarded(&err->error, false, [&] {
    return is_region_directory(path) ? directory_delete(path, table, old_row, level, cid, err)
                                     : delete_row(path, table, old_row, level, cid, err);
  });
}

bool pfs_core_write_truncate(const char* path, int table, int level, std::uint32_t cid,
                             PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  using namespace pfs::fdw::write;
  clear_write_error(err);
  return guarded(&err->error, false, [&] {
    return is_region_directory(path) ? directory_truncate(path, table, level, cid, err)
                                     : truncate_table(path, table, level, cid, err);
  });
}

bool pfs_core_write_pending(void) noexcept { return !pfs::fdw::write::pending_log().empty(); }

bool pfs_core_write_commit(const volatile sig_atomic_t* interrupt, std::uint32_t timeout_ms,
                           PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  using namespace pfs::fdw::write;
  clear_write_error(err);
  if (pending_log().empty()) return true;
  return guarded(&err->error, false, [&] { return commit(interrupt, timeout_ms, err); });
}

void pfs_core_write_discard(void) noexcept { pfs::fdw::write::pending_log().clear(); }

void pfs_core_write_forget_regions(void) noexcept { pfs::fdw::write::writables().clear(); }

void pfs_core_write_subxact_end(int level, bool commit) noexcept {
  auto& ops = pfs::fdw::write::pending_log();
  if (commit) {
    for (auto& op : ops)
      if (op.level >= level) op.level = level - 1;
  } else {
    ops.erase(std::remove_if(ops.begin(), ops.end(), [level](const auto& op) { return op.level >= level; }),
              ops.end());
  }
}

PfsCoreOverlay* pfs_core_overlay_begin(const char* path, int table, std::uint32_t cid,
                                       PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  using namespace pfs::fdw::write;
  clear_write_error(err);
  if (path == nullptr || pending_log().empty()) return nullptr;
  return guarded(&err->error, static_cast<PfsCoreOverlay*>(nullptr), [&] {
    return (is_region_directory(path) ? directory_overlay_begin(path, table, cid)
                                      : overlay_begin(path, table, cid))
        .release();
  });
}

int pfs_core_overlay_row(PfsCoreOverlay* overlay, PfsCoreValue* row) noexcept {
  if (overlay == nullptr) return 0;
  try {
    if (!overlay->parts.empty()) return pfs::fdw::write::directory_overlay_row(*overlay, row);
    return pfs::fdw::write::overlay_row(*overlay, row);
  } catch (...) {
    return -2;  // out of memory (copying the key)
  }
}

bool pfs_core_overlay_extra(PfsCoreOverlay* overlay, PfsCoreValue* row) noexcept {
  if (overlay == nullptr) return false;
  if (!overlay->parts.empty()) return pfs::fdw::write::directory_overlay_extra(*overlay, row);
  return pfs::fdw::write::overlay_extra(*overlay, row);
}

void pfs_core_overlay_rewind(PfsCoreOverlay* overlay) noexcept {
  if (overlay == nullptr) return;
  overlay->next_extra = 0;
  for (auto& [k, rs] : overlay->rows) rs.seen = false;
  overlay->next_part = 0;
  for (auto& part : overlay->parts) pfs_core_overlay_rewind(part.overlay.get());
}

void pfs_core_overlay_free(PfsCoreOverlay* overlay) noexcept { delete overlay; }

}  // extern "C"

// The overlay of a scan: a transaction's pending changes applied to the rows a
// scan produces, so that it reads its own writes.
#include <algorithm>
#include <tuple>
#include <utility>

#include "fdw/core_write.h"

namespace pfs::fdw::write {

static void replay_row(PfsCoreOverlay& o, const pending_op& op) {
  if (op.kind == op_kind::truncate) {
    o.hide_all = true;
    o.rows.clear();
    o.order.clear();
    return;
  }
  const std::string k = encode_key(op.key);
  auto it = o.rows.find(k);
  if (it == o.rows.end()) {
    if (op.kind == op_kind::update && o.hide_all) return;  // not visible: nothing to update
    it = o.rows.emplace(k, row_state{}).first;
    it->second.key = op.key;
    o.order.push_back(k);
  }
  row_state& rs = it->second;
  switch (op.kind) {
    case op_kind::insert:
      rs.present = true;
      rs.inserted = true;
      rs.values = op.set;
      break;
    case op_kind::remove:
      rs.present = false;
      rs.inserted = false;
      rs.values.clear();
      break;
    case op_kind::update:
      if (!rs.present) break;
      for (const auto& [c, v] : op.set) put_value(rs.values, c, v);
      break;
    case op_kind::truncate:
      break;
  }
}

static void give(PfsCoreValue& out, const value& v, bool text) {
  out.isnull = v.null;
  out.changed = true;
  if (v.null) return;
  if (text) {
    out.text = v.s.data();
    out.len = static_cast<std::uint32_t>(v.s.size());
  } else {
    out.value = v.i;
  }
}

static bool is_text(const reader::table_def& t, int c) {
  return t.columns[static_cast<std::size_t>(c)].type == reader::column_type::text;
}

static void set_int(PfsCoreValue& v, std::int64_t x, bool& changed) {
  if (!v.isnull && v.value == x) return;
  v.isnull = false;
  v.value = x;
  v.changed = true;
  changed = true;
}

// A memory summary row as TRUNCATE leaves it (MySQL's rebase, as
// setup::reset_memory_summaries does): the allocations and frees that cancel out
// are taken off both counts, and the low and high marks become the current values.
static void rebase_memory_row(const reader::table_def& t, PfsCoreValue* row, bool& changed) {
  const auto col = [&t](const char* name) { return reader::column_index(t, name); };
  for (const auto& [alloc, freed] : {std::pair{"count_alloc", "count_free"},
                                     std::pair{"sum_number_of_bytes_alloc", "sum_number_of_bytes_free"}}) {
    const int a = col(alloc), f = col(freed);
    if (a < 0 || f < 0 || row[a].isnull || row[f].isnull) continue;
    const std::int64_t base = std::min(row[a].value, row[f].value);
    set_int(row[a], row[a].value - base, changed);
    set_int(row[f], row[f].value - base, changed);
  }
  for (const auto& [current, low, high] :
       {std::tuple{"current_count_used", "low_count_used", "high_count_used"},
        std::tuple{"current_number_of_bytes_used", "low_number_of_bytes_used",
                   "high_number_of_bytes_used"}}) {
    const int c = col(current), l = col(low), h = col(high);
    if (c < 0 || l < 0 || h < 0 || row[c].isnull) continue;
    set_int(row[l], row[c].value, changed);
    set_int(row[h], row[c].value, changed);
  }
}

static void zero_stats(const PfsCoreOverlay& o, PfsCoreValue* row, bool& changed) {
  std::uint64_t effects = o.zero_all;
  if (effects & (kResetMemory | kResetMemoryByThread | kResetMemoryByAccount | kResetMemoryByUser |
                 kResetMemoryByHost)) {
    rebase_memory_row(*o.table, row, changed);
    return;
  }
  if (effects & (kResetErrors | kResetErrorsByThread | kResetErrorsByAccount | kResetErrorsByUser |
                 kResetErrorsByHost)) {
    // A reset error row has not been seen: FIRST_SEEN and LAST_SEEN are NULL.
    for (const char* seen : {"first_seen", "last_seen"}) {
      const int c = reader::column_index(*o.table, seen);
      if (c < 0 || row[c].isnull) continue;
      row[c].isnull = true;
      row[c].changed = true;
      changed = true;
    }
  }
  if (o.zero_file != 0) {
    // A file (socket) reset zeroes only the wait/io/file/ (wait/io/socket/) rows.
    const int e = reader::column_index(*o.table, "event_name");
    if (e >= 0 && !row[e].isnull) {
      const std::string_view name = text_of(row[e]);
      if (name.substr(0, 13) == "wait/io/file/") effects |= o.zero_file & kResetFile;
      if (name.substr(0, 15) == "wait/io/socket/") effects |= o.zero_file & kResetSocket;
    }
  }
  if (effects == 0) return;
  for (std::size_t c = 0; c < o.table->columns.size(); ++c) {
    const reader::column_type type = o.table->columns[c].type;
    if ((type != reader::column_type::int64 && type != reader::column_type::numeric) ||
        !is_stat_column(o.table->columns[c].name))
      continue;
    if (row[c].isnull || row[c].value != 0) {
      row[c].isnull = false;
      row[c].value = 0;
      row[c].changed = true;
      changed = true;
    }
  }
}

std::unique_ptr<PfsCoreOverlay> overlay_begin(const char* path, int table, std::uint32_t cid) {
  const reader::table_def* t = table_at(table);
  if (t == nullptr) return nullptr;
  auto o = std::make_unique<PfsCoreOverlay>();
  o->table = t;
  const table_rules* own = rules_of(table);
  if (own != nullptr && own->keys[0] != nullptr) {
    o->rules = own;
    o->keys = key_columns(*own, *t);
  }
  const std::uint64_t seen = t->writes.seen;
  const std::uint64_t file_only = t->writes.seen_file_rows;
  bool any = false;
  for (const pending_op& op : pending_log()) {
    if (op.cid >= cid || op.path != path) continue;
    if (op.table == table) {
      any = true;
      if (o->rules != nullptr) {
        replay_row(*o, op);
        continue;
      }
    }
    if (op.kind != op_kind::truncate) continue;
    const std::uint64_t e = rules_of(op.table)->truncate & seen;
    if (e == 0) continue;
    any = true;
    constexpr std::uint64_t kHides = kHideCurrent | kHideHistory | kHideHistoryLong | kHideStages |
                                     kHideStagesHistory | kHideStagesHistoryLong | kHideStatements |
                                     kHideStatementsHistory | kHideStatementsHistoryLong | kHideTransactions |
                                     kHideTransactionsHistory | kHideTransactionsHistoryLong | kResetDigests;
    if (e & kHides) {
      o->hide_all = true;
    } else if ((e & ~file_only) != 0) {
      o->zero_all |= e & ~file_only;
    } else {
      o->zero_file |= e;
    }
  }
  if (!any) return nullptr;
  return o;
}

int overlay_row(PfsCoreOverlay& o, PfsCoreValue* row) {
  const reader::table_def& t = *o.table;
  bool changed = false;
  if (o.rules != nullptr) {
    std::vector<value> key;
    for (int c : o.keys) {
      if (c < 0 || row[c].isnull) return o.hide_all ? -1 : 0;  // no key: cannot be matched
      key.push_back(from_core(row[c], is_text(t, c)));
    }
    auto it = o.rows.find(encode_key(key));
    if (it == o.rows.end()) {
      if (o.hide_all) return -1;
    } else {
      row_state& rs = it->second;
      if (!rs.present) return -1;
      rs.seen = true;
      for (const auto& [c, v] : rs.values) give(row[c], v, is_text(t, c));
      changed = !rs.values.empty();
    }
  } else if (o.hide_all) {
    return -1;
  }
  zero_stats(o, row, changed);
  return changed ? 1 : 0;
}

bool overlay_extra(PfsCoreOverlay& o, PfsCoreValue* row) {
  const reader::table_def& t = *o.table;
  while (o.next_extra < o.order.size()) {
    auto it = o.rows.find(o.order[o.next_extra++]);
    if (it == o.rows.end()) continue;
    const row_state& rs = it->second;
    if (!rs.present || !rs.inserted || rs.seen) continue;
    const std::size_t all = t.columns.size() + static_cast<std::size_t>(extra_column_count(t));
    for (std::size_t c = 0; c < all; ++c) {  // the appended columns too: the caller fills them
      row[c] = PfsCoreValue{};
      row[c].isnull = true;
    }
    for (std::size_t k = 0; k < o.keys.size(); ++k) give(row[o.keys[k]], rs.key[k], is_text(t, o.keys[k]));
    for (const auto& [c, v] : rs.values) give(row[c], v, is_text(t, c));
    return true;
  }
  return false;
}

}  // namespace pfs::fdw::write

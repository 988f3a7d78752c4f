// What SQL may change and how values are checked: the rules of each table
// (from the registry), column domains and defaults, and the errors of the write path.
#include "fdw/core_write.h"

namespace pfs::fdw::write {

static_assert(PFS_CORE_OP_UPDATE == reader::kWriteUpdate && PFS_CORE_OP_INSERT == reader::kWriteInsert &&
              PFS_CORE_OP_DELETE == reader::kWriteDelete && PFS_CORE_OP_TRUNCATE == reader::kWriteTruncate);

// The rules of every table, by catalogue index (built once from the registry).
static const std::vector<table_rules>& all_rules() {
  static const std::vector<table_rules> rules = [] {
    std::vector<table_rules> out;
    for (const reader::table_def& t : reader::tables())
      out.push_back(table_rules{t.writes, static_cast<table_id>(t.id)});
    return out;
  }();
  return rules;
}

// The rules of a table that SQL may change; nullptr for a read-only table.
const table_rules* rules_of(int table) noexcept {
  const reader::table_def* t = table_at(table);
  if (t == nullptr) return nullptr;
  const table_rules& r = all_rules()[t->id];
  return r.ops == 0 ? nullptr : &r;
}

bool is_stat_column(const char* name) noexcept {
  for (const char* p : {"count_", "sum_", "min_", "avg_", "max_", "quantile_"})
    if (std::strncmp(name, p, std::strlen(p)) == 0) return true;
  return false;
}

// ---------------------------------------------------------------------------
// Values and their domains

value from_core(const PfsCoreValue& v, bool text) {
  value out;
  out.null = v.isnull;
  if (v.isnull) return out;
  if (text)
    out.s.assign(v.text != nullptr ? v.text : "", v.len);
  else
    out.i = v.value;
  return out;
}

bool same(const PfsCoreValue& a, const PfsCoreValue& b, bool text) {
  if (a.isnull || b.isnull) return a.isnull == b.isnull;
  if (!text) return a.value == b.value;
  return a.len == b.len && (a.len == 0 || std::memcmp(a.text, b.text, a.len) == 0);
}

void set_static(PfsCoreValue& v, std::string_view s) {
  v.isnull = false;
  v.text = s.data();
  v.len = static_cast<std::uint32_t>(s.size());
  v.changed = true;
}

// Replaces v with s unless it already holds exactly s.
void normalize_to(PfsCoreValue& v, std::string_view s) {
  if (!v.isnull && v.len == s.size() && std::memcmp(v.text, s.data(), s.size()) == 0) return;
  set_static(v, s);
}

// The column rules are the registry's (agent/reader/tables.cpp).
domain domain_of(const char* column, std::size_t& max_bytes) {
  const reader::column_rule* r = reader::find_column_rule(column);
  max_bytes = r != nullptr ? r->max_bytes : 0;
  return r != nullptr ? r->domain : domain::any;
}

// MySQL's default of a column of an inserted row.
std::string_view default_of(const char* column) {
  const reader::column_rule* r = reader::find_column_rule(column);
  return r != nullptr && r->default_value != nullptr ? std::string_view(r->default_value)
                                                     : std::string_view();
}

std::string dq(std::string_view s) { return "\"" + std::string(s) + "\""; }

void write_error(PfsCoreWriteError* err, const char* sqlstate, std::string_view message,
                 std::string_view detail, std::string_view hint) {
  set_error(&err->error, PFS_CORE_INTERNAL, message, detail, hint);
  std::snprintf(err->sqlstate, sizeof(err->sqlstate), "%s", sqlstate);
}

void clear_write_error(PfsCoreWriteError* err) noexcept {
  if (err == nullptr) return;
  clear_error(&err->error);
  err->sqlstate[0] = '\0';
}

bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 'a' + 'A');
    if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 'a' + 'A');
    if (x != y) return false;
  }
  return true;
}

std::string_view text_of(const PfsCoreValue& v) { return {v.text != nullptr ? v.text : "", v.len}; }

// The names of the timers a region's provider calibrated, for hints.
std::string available_timers(const layout::region_header& h) {
  std::string out;
  for (int k = 1; k < timers::timer_kind_count; ++k) {
    if (layout::load_relaxed(h.timers[k].available) == 0) continue;
    if (!out.empty()) out += ", ";
    out += dq(timers::timer_name(static_cast<timers::timer_kind>(k)));
  }
  return out.empty() ? "none" : out;
}

}  // namespace pfs::fdw::write

// The pending log: each UPDATE, INSERT, DELETE and TRUNCATE of a transaction,
// checked and recorded at statement time, with the replays of the log on a table's keys.
#include "fdw/core_write.h"

namespace pfs::fdw::write {

// ---------------------------------------------------------------------------
// The pending log

std::vector<pending_op>& pending_log() noexcept {
  static std::vector<pending_op> ops;
  return ops;
}

// A key as one string (map key): each part tagged with its kind and length.
std::string encode_key(const std::vector<value>& key) {
  std::string out;
  for (const value& v : key) {
    if (v.null)
      out += "n;";
    else
      out += std::to_string(v.i) + ':' + std::to_string(v.s.size()) + ':' + v.s + ';';
  }
  return out;
}

// The key columns of a table (indexes), in rules order.
std::vector<int> key_columns(const table_rules& r, const reader::table_def& t) {
  std::vector<int> out;
  for (const char* k : r.keys)
    if (k != nullptr) out.push_back(reader::column_index(t, k));
  return out;
}

static bool key_from_row(const table_rules& r, const reader::table_def& t, const PfsCoreValue* row,
                         std::vector<value>& key, PfsCoreWriteError* err) {
  key.clear();
  for (int c : key_columns(r, t)) {
    if (c < 0 || row[c].isnull) {
      write_error(err, kInternalError, "row of performance_schema table " + dq(t.name) + " has no key",
                  "The key column " + dq(c < 0 ? "?" : t.columns[static_cast<std::size_t>(c)].name) +
                      " is missing or NULL.");
      return false;
    }
    key.push_back(
        from_core(row[c], t.columns[static_cast<std::size_t>(c)].type == reader::column_type::text));
  }
  return true;
}

static std::string key_text(const table_rules& r, const std::vector<value>& key) {
  std::string names, values;
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (i != 0) names += ", ", values += ", ";
    names += r.keys[i];
    values += key[i].null ? "NULL" : key[i].s;  // (the keys of tables that take INSERT are text)
  }
  return "(" + names + ")=(" + values + ")";
}

const value* find_set(const pending_op& op, int column) {
  for (const auto& [c, v] : op.set)
    if (c == column) return &v;
  return nullptr;
}

int flag_of(const pending_op& op, const reader::table_def& t, const char* column) {
  const value* v = find_set(op, reader::column_index(t, column));
  if (v == nullptr) return -1;
  return v->s == "YES" ? 1 : 0;
}

// Checks and normalizes the value of an updatable or inserted column in place.
static bool check_value(const reader::table_def& t, int column, PfsCoreValue& v, mapped_region* region,
                        PfsCoreWriteError* err) {
  const char* name = t.columns[static_cast<std::size_t>(column)].name;
  std::size_t max_bytes = 0;
  const domain d = domain_of(name, max_bytes);
  if (v.isnull) {
    write_error(err, kNotNullViolation,
                "null value in column " + dq(name) + " of performance_schema table " + dq(t.name) +
                    " violates not-null constraint");
    return false;
  }
  const std::string_view s = text_of(v);
  switch (d) {
    case domain::yes_no:
      if (ascii_iequals(s, "YES")) {
        normalize_to(v, "YES");
      } else if (ascii_iequals(s, "NO")) {
        normalize_to(v, "NO");
      } else {
        write_error(err, kInvalidParameterValue, "invalid value for column " + dq(name) + ": " + dq(s), {},
                    "Valid values are \"YES\" and \"NO\".");
        return false;
      }
      return true;
    case domain::timer_name: {
      const timers::timer_kind k = timers::timer_from_name(s);
      if (k == timers::timer_kind::none) {
        write_error(err, kInvalidParameterValue, "invalid value for column " + dq(name) + ": " + dq(s), {},
                    "Valid values are the timers of performance_timers: \"CYCLE\", \"NANOSECOND\", "
                    "\"MICROSECOND\", \"MILLISECOND\", \"TICK\" and \"THREAD_CPU\".");
        return false;
      }
      const layout::region_header& h = region->reader->region().header();
      if (layout::load_relaxed(h.timers[static_cast<int>(k)].available) == 0) {
        write_error(err, kInvalidParameterValue, "timer " + dq(timers::timer_name(k)) + " is not available",
                    "The instrumented program of region " + dq(region->path) +
                        " found no usable timer of this kind on its machine.",
                    "The timers available in this region are " + available_timers(h) + ".");
        return false;
      }
      normalize_to(v, timers::timer_name(k));
      return true;
    }
    case domain::object_type:
      if (!ascii_iequals(s, "TABLE")) {
        write_error(err, kInvalidParameterValue, "invalid value for column " + dq(name) + ": " + dq(s),
                    "MySQL's object types are EVENT, FUNCTION, PROCEDURE, TABLE and TRIGGER; this provider "
                    "instruments tables only.",
                    "The only valid value is \"TABLE\".");
        return false;
      }
      normalize_to(v, "TABLE");
      return true;
    case domain::key_text:
      if (s.empty()) {
        write_error(err, kInvalidParameterValue, "invalid value for column " + dq(name) + ": \"\"", {},
                    "Use \"%\" to match every value.");
        return false;
      }
      if (s.size() > max_bytes) {
        write_error(err, kStringDataRightTruncation, "value too long for column " + dq(name),
                    "Column " + dq(name) + " of performance_schema table " + dq(t.name) + " holds at most " +
                        std::to_string(max_bytes) + " bytes.");
        return false;
      }
      return true;
    case domain::meter_frequency:
      // MySQL 8.4: seconds, MEDIUMINT UNSIGNED; at least one second here.
      if (v.value < layout::kMinMeterFrequency || v.value > layout::kMaxMeterFrequency) {
        write_error(err, kInvalidParameterValue,
                    "invalid value for column " + dq(name) + ": " + std::to_string(v.value), {},
                    "FREQUENCY is in seconds, from " + std::to_string(layout::kMinMeterFrequency) + " to " +
                        std::to_string(layout::kMaxMeterFrequency) + ".");
        return false;
      }
      return true;
    case domain::any:
      break;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Replays of the log on one keyed table

// The keys of the rows of a table now in the region.
bool region_keys(mapped_region& region, const table_rules& r, const reader::table_def& t,
                 std::set<std::string>& out, PfsCoreWriteError* err) {
  std::vector<reader::row> rows;
  if (region_error e = region.reader->scan(t, rows)) {
    set_error(&err->error, e);
    return false;
  }
  const std::vector<int> keys = key_columns(r, t);
  out.clear();
  for (const reader::row& row : rows) {
    std::vector<value> key;
    for (int c : keys) {
      const reader::cell& cell = row[static_cast<std::size_t>(c)];
      value v;
      v.null = cell.null;
      if (t.columns[static_cast<std::size_t>(c)].type == reader::column_type::text)
        v.s = cell.s;
      else
        v.i = cell.i;
      key.push_back(std::move(v));
    }
    out.insert(encode_key(key));
  }
  return true;
}

std::uint64_t capacity_of(mapped_region& region, table_id id) {
  const region_map& m = region.reader->region();
  return m.count(id == table_id::setup_actors ? layout::kArraySetupActors : layout::kArraySetupObjects);
}

// Applies one logged change to the set of keys present; for INSERT checks the key
// is new and the table has room. skip: a change that finds no row (another session
// deleted it) does nothing.
bool replay_key(std::set<std::string>& present, const pending_op& op, const table_rules& r,
                std::uint64_t capacity, const char* table_name, bool& skip, PfsCoreWriteError* err) {
  skip = false;
  const std::string k = encode_key(op.key);
  switch (op.kind) {
    case op_kind::truncate:
      present.clear();
      return true;
    case op_kind::insert:
      if (present.count(k) != 0) {
        write_error(err, kUniqueViolation, "duplicate row in performance_schema table " + dq(table_name),
                    "Key " + key_text(r, op.key) + " already exists.");
        return false;
      }
      if (present.size() >= capacity) {
        write_error(err, kProgramLimitExceeded, "performance_schema table " + dq(table_name) + " is full",
                    "The region has room for " + std::to_string(capacity) + " rows.",
                    std::string("Start the instrumented program with a larger ") + r.size_variable + ".");
        return false;
      }
      present.insert(k);
      return true;
    case op_kind::remove:
      skip = present.erase(k) == 0;
      return true;
    case op_kind::update:
      skip = present.count(k) == 0;
      return true;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Statement-time changes

static bool check_op(int table, int op, const table_rules*& r, const reader::table_def*& t,
                     PfsCoreWriteError* err) {
  t = table_at(table);
  r = rules_of(table);
  if (t == nullptr || r == nullptr || (r->ops & op) == 0) {
    write_error(
        err, kFeatureNotSupported,
        "performance_schema table " + dq(t != nullptr ? t->name : "?") + " does not allow this change");
    return false;
  }
  return true;
}

// The start of an UPDATE or DELETE: the table allows it, and the old row's key
// names the row (op gets path, table, kind, level, cid and key).
static bool start_keyed_op(const char* path, int table, op_kind kind, const PfsCoreValue* old_row, int level,
                           std::uint32_t cid, const table_rules*& r, const reader::table_def*& t,
                           pending_op& op, PfsCoreWriteError* err) {
  const int allowed = kind == op_kind::update ? PFS_CORE_OP_UPDATE : PFS_CORE_OP_DELETE;
  if (!check_op(table, allowed, r, t, err)) return false;
  op.path = path;
  op.table = table;
  op.kind = kind;
  op.level = level;
  op.cid = cid;
  return key_from_row(*r, *t, old_row, op.key, err);
}

bool update_row(const char* path, int table, const PfsCoreValue* old_row, PfsCoreValue* new_row,
                const bool* set, int level, std::uint32_t cid, PfsCoreWriteError* err) {
  const table_rules* r;
  const reader::table_def* t;
  pending_op op;
  if (!start_keyed_op(path, table, op_kind::update, old_row, level, cid, r, t, op, err)) return false;
  mapped_region* region = nullptr;  // for the timers of setup_timers
  if (r->id == table_id::setup_timers && (region = writable_region(path, err)) == nullptr) return false;
  for (std::size_t c = 0; c < t->columns.size(); ++c) {
    const int col = static_cast<int>(c);
    const reader::column_def& def = t->columns[c];
    const bool text = def.type == reader::column_type::text;
    const bool changed = !same(old_row[c], new_row[c], text);
    if (!listed(r->updatable, def.name)) {
      if (set[c] || changed) {
        write_error(err, kFeatureNotSupported,
                    "cannot update column " + dq(def.name) + " of performance_schema table " + dq(t->name));
        return false;
      }
      continue;
    }
    if (!set[c] && !changed) continue;  // (a trigger may change a column the SET list does not name)
    if (!check_value(*t, col, new_row[c], region, err)) return false;
    op.set.emplace_back(col, from_core(new_row[c], text));
  }
  // The appended columns say where the row comes from: never changed.
  for (int k = 0; k < extra_column_count(*t); ++k) {
    const std::size_t c = t->columns.size() + static_cast<std::size_t>(k);
    if (set[c] || !same(old_row[c], new_row[c], k != kExtraProcessId)) {
      write_error(err, kFeatureNotSupported,
                  "cannot update column " + dq(pfs_core_column_name(table, static_cast<int>(c))) +
                      " of performance_schema table " + dq(t->name));
      return false;
    }
  }
  // The trace worklog: tracing needs the instrument enabled; disabling it ends tracing.
  if (r->id == table_id::setup_instruments) {
    const int e = reader::column_index(*t, "enabled"), tr = reader::column_index(*t, "trace_enabled");
    if (e >= 0 && tr >= 0 && !new_row[e].isnull) {
      const bool enabled = text_of(new_row[e]) == "YES";
      const value* trace = find_set(op, tr);
      if (trace != nullptr && trace->s == "YES" && !enabled) {
        write_error(err, kObjectNotInPrerequisiteState,
                    "instrument " + dq(op.key[0].s) + " cannot be traced while it is disabled",
                    "TRACE_ENABLED may be 'YES' only when ENABLED is 'YES'.",
                    "Set enabled = 'YES' in the same UPDATE.");
        return false;
      }
      if (!enabled && find_set(op, e) != nullptr && trace == nullptr) {
        normalize_to(new_row[tr], "NO");
        value no;
        no.null = false;
        no.s = "NO";
        op.set.emplace_back(tr, std::move(no));
      }
    }
  }
  if (!op.set.empty()) pending_log().push_back(std::move(op));
  return true;
}

bool insert_row(const char* path, int table, PfsCoreValue* row, const bool* named, bool skip_duplicate,
                bool* skipped, int level, std::uint32_t cid, PfsCoreWriteError* err) {
  const table_rules* r;
  const reader::table_def* t;
  if (skipped != nullptr) *skipped = false;
  if (!check_op(table, PFS_CORE_OP_INSERT, r, t, err)) return false;
  mapped_region* region = writable_region(path, err);
  if (region == nullptr) return false;
  pending_op op;
  op.path = path;
  op.table = table;
  op.kind = op_kind::insert;
  op.level = level;
  op.cid = cid;
  for (std::size_t c = 0; c < t->columns.size(); ++c) {
    const char* name = t->columns[c].name;
    // A column the INSERT leaves out takes MySQL's default; one it names must not
    // be NULL (MySQL's columns are NOT NULL; an UPDATE to NULL is the same error).
    if (row[c].isnull && named != nullptr && named[c]) {
      write_error(err, kNotNullViolation,
                  "null value in column " + dq(name) + " of performance_schema table " + dq(t->name) +
                      " violates not-null constraint",
                  {}, "Leave the column out of the INSERT to get its default, " + dq(default_of(name)) + ".");
      return false;
    }
    if (row[c].isnull) set_static(row[c], default_of(name));
    if (!check_value(*t, static_cast<int>(c), row[c], region, err)) return false;
    if (!listed(r->keys, name)) op.set.emplace_back(static_cast<int>(c), from_core(row[c], true));
  }
  if (!key_from_row(*r, *t, row, op.key, err)) return false;
  // The keys the transaction sees: the region's, with its earlier changes applied.
  std::set<std::string> present;
  if (!region_keys(*region, *r, *t, present, err)) return false;
  const std::uint64_t capacity = capacity_of(*region, r->id);
  for (const pending_op& earlier : pending_log()) {
    if (earlier.table != table || earlier.path != op.path) continue;
    bool skip = false;
    if (!replay_key(present, earlier, *r, UINT64_MAX, t->name, skip, err)) {
      // Earlier changes were checked when made; the region changed since (another
      // session's commit): the commit will tell. Count the row as present.
      clear_write_error(err);
    }
  }
  bool skip = false;
  if (skip_duplicate && present.count(encode_key(op.key)) != 0) {
    if (skipped != nullptr) *skipped = true;
    return true;
  }
  if (!replay_key(present, op, *r, capacity, t->name, skip, err)) return false;
  pending_log().push_back(std::move(op));
  return true;
}

bool delete_row(const char* path, int table, const PfsCoreValue* old_row, int level, std::uint32_t cid,
                PfsCoreWriteError* err) {
  const table_rules* r;
  const reader::table_def* t;
  pending_op op;
  if (!start_keyed_op(path, table, op_kind::remove, old_row, level, cid, r, t, op, err)) return false;
  pending_log().push_back(std::move(op));
  return true;
}

bool truncate_table(const char* path, int table, int level, std::uint32_t cid, PfsCoreWriteError* err) {
  const table_rules* r;
  const reader::table_def* t;
  if (!check_op(table, PFS_CORE_OP_TRUNCATE, r, t, err)) return false;
  if (writable_region(path, err) == nullptr) return false;
  pending_op op;
  op.path = path;
  op.table = table;
  op.kind = op_kind::truncate;
  op.level = level;
  op.cid = cid;
  pending_log().push_back(std::move(op));
  return true;
}

// ---------------------------------------------------------------------------
// The overlay of a scan

void put_value(std::vector<std::pair<int, value>>& into, int column, const value& v) {
  for (auto& [c, old] : into)
    if (c == column) {
      old = v;
      return;
    }
  into.emplace_back(column, v);
}

}  // namespace pfs::fdw::write

// Writes: setup changes made from SQL (UPDATE, INSERT, DELETE, TRUNCATE), kept as a
// per-backend log of pending changes until the transaction commits (see pfs_core.h).
//
// The rules follow MySQL's (reference/mysql_perfschema.md 1.3):
//   setup_instruments  UPDATE enabled, timed, trace_enabled      key name
//   setup_consumers    UPDATE enabled                            key name
//   setup_timers       UPDATE timer_name                         key name
//   threads            UPDATE instrumented, history              key thread_id
//   setup_actors       UPDATE enabled, history, trace_enabled;   key (host, user, role)
//                      INSERT, DELETE, TRUNCATE
//   setup_objects      UPDATE enabled, timed; INSERT, DELETE,    key (object_type,
//                      TRUNCATE                                  object_schema, object_name)
//   events_waits_current / _history / _history_long, the summaries: TRUNCATE only.
//
// The log is replayed three ways:
// - statement time: an INSERT checks the key against the region's rows with the
//   transaction's earlier changes applied (duplicate, full);
// - scans (the overlay): the changes of earlier commands are applied to the rows a
//   scan produces, so a transaction reads its own writes;
// - commit: under the setup lock of each region, the log is checked against the
//   current setup (a row inserted meanwhile by another session, an instrument
//   disabled meanwhile), then applied in order through the agent's setup functions,
//   each change writing only the columns it set.
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agent/region/setup.h"
#include "fdw/core_internal.h"
#include "timers/timer.h"

namespace pfs::fdw {
namespace {

using reader::table_id;
using namespace reader;  // the write rules: truncate_effect, write_op

// ---------------------------------------------------------------------------
// What each table allows

}  // namespace
}  // namespace pfs::fdw

// Types the C ABI's PfsCoreOverlay holds (a named namespace: a struct with external
// linkage may not hold members of types with internal linkage).
namespace pfs::fdw::modify {

// A table's write rules (the registry's, agent/reader/tables.cpp) with its id.
struct table_rules : reader::write_rules {
  reader::table_id id;
};

struct value {
  bool null = true;
  std::int64_t i = 0;
  std::string s;
};

struct row_state {
  bool present = true;    // visible (from the region or inserted)
  bool inserted = false;  // the transaction inserted it (its values are all in values)
  std::vector<value> key;
  std::vector<std::pair<int, value>> values;  // inserted: every non-key column; else the columns set
  bool seen = false;                          // produced by the scan (not an extra row)
};

}  // namespace pfs::fdw::modify

namespace pfs::fdw {
namespace {

using modify::row_state;
using modify::table_rules;
using modify::value;

static_assert(PFS_CORE_OP_UPDATE == reader::kWriteUpdate && PFS_CORE_OP_INSERT == reader::kWriteInsert &&
              PFS_CORE_OP_DELETE == reader::kWriteDelete && PFS_CORE_OP_TRUNCATE == reader::kWriteTruncate);

// The rules of every table, by catalogue index (built once from the registry).
const std::vector<table_rules>& all_rules() {
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

template <std::size_t N>
bool listed(const char* const (&names)[N], const char* name) noexcept {
  for (const char* n : names)
    if (n != nullptr && std::strcmp(n, name) == 0) return true;
  return false;
}

bool is_stat_column(const char* name) noexcept {
  for (const char* p : {"count_", "sum_", "min_", "avg_", "max_"})
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

enum class domain { none, yes_no, timer, object_type, key_text };

domain domain_of(const char* column, std::size_t& max_bytes) {
  max_bytes = 0;
  for (const char* n : {"enabled", "timed", "history", "trace_enabled", "instrumented"})
    if (std::strcmp(column, n) == 0) return domain::yes_no;
  if (std::strcmp(column, "timer_name") == 0) return domain::timer;
  if (std::strcmp(column, "object_type") == 0) return domain::object_type;
  const struct {
    const char* name;
    std::size_t cap;
  } texts[] = {{"host", layout::kHostLen},
               {"user", layout::kUserLen},
               {"role", layout::kUserLen},
               {"object_schema", layout::kObjectSchemaLen},
               {"object_name", layout::kTableNameLen}};
  for (const auto& t : texts)
    if (std::strcmp(column, t.name) == 0) {
      max_bytes = t.cap - 1;
      return domain::key_text;
    }
  return domain::none;
}

// MySQL's default of a column of an inserted row.
std::string_view default_of(const char* column) {
  std::size_t ignored;
  switch (domain_of(column, ignored)) {
    case domain::yes_no:
      return std::strcmp(column, "trace_enabled") == 0 ? "NO" : "YES";
    case domain::object_type:
      return "TABLE";
    case domain::key_text:
      return "%";
    default:
      return {};
  }
}

// SQLSTATEs of write errors (PostgreSQL's errcodes.h names, without ERRCODE_).
constexpr const char* kFeatureNotSupported = "0A000";
constexpr const char* kStringDataRightTruncation = "22001";
constexpr const char* kInvalidParameterValue = "22023";
constexpr const char* kNotNullViolation = "23502";
constexpr const char* kUniqueViolation = "23505";
constexpr const char* kSerializationFailure = "40001";
constexpr const char* kInsufficientPrivilege = "42501";
constexpr const char* kProgramLimitExceeded = "54000";
constexpr const char* kObjectNotInPrerequisiteState = "55000";
constexpr const char* kLockNotAvailable = "55P03";
constexpr const char* kInternalError = "XX000";

std::string dq(std::string_view s) { return "\"" + std::string(s) + "\""; }

void write_error(PfsCoreWriteError* err, const char* sqlstate, std::string_view message,
                 std::string_view detail = {}, std::string_view hint = {}) {
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

// ---------------------------------------------------------------------------
// Writable mappings, one per region path, kept across transactions.

using writable_cache = std::unordered_map<std::string, std::unique_ptr<PfsCoreRegion>>;

writable_cache& writables() noexcept {
  static writable_cache regions;
  return regions;
}

bool same_file(const PfsCoreRegion& r) {
  struct stat st {};
  if (stat(r.path.c_str(), &st) != 0) return false;
  return st.st_dev == r.dev && st.st_ino == r.ino && st.st_size == r.size;
}

std::string user_name(uid_t uid) {
  if (const passwd* p = getpwuid(uid)) return p->pw_name;
  return std::to_string(uid);
}
std::string group_name(gid_t gid) {
  if (const group* g = getgrgid(gid)) return g->gr_name;
  return std::to_string(gid);
}

// A region this process may read but not write: the error says so, with the file's
// mode, owner and group.
bool read_only_error(const std::string& path, PfsCoreWriteError* err) {
  if (access(path.c_str(), W_OK) == 0) return false;
  const int write_errno = errno;
  if (write_errno != EACCES && write_errno != EPERM && write_errno != EROFS) return false;
  if (access(path.c_str(), R_OK) != 0) return false;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return false;
  const std::string message = "region file \"" + path + "\" is read-only";
  if (write_errno == EROFS) {
    write_error(err, kObjectNotInPrerequisiteState, message, "The file system that holds the file is mounted read-only.",
                "Put the region on a writable file system to change the setup from SQL.");
    return true;
  }
  char mode[8];
  std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
  write_error(
      err, kInsufficientPrivilege, message,
      "The file has mode " + std::string(mode) + ", owner " + dq(user_name(st.st_uid)) + " and group " +
          dq(group_name(st.st_gid)) + "; the server runs as user " + dq(user_name(geteuid())) +
          ", which may read it but not write it.",
      "Start the instrumented program with PFS_REGION_MODE=0660 (the default) and a group the server's "
      "operating system user belongs to, or make the file writable for that user.");
  return true;
}

PfsCoreRegion* writable_region(const std::string& path, PfsCoreWriteError* err) {
  writable_cache& c = writables();
  auto it = c.find(path);
  if (it != c.end()) {
    // The same file, and still a valid region (a file rewritten in place is not).
    const region_map& m = it->second->reader->region();
    if (same_file(*it->second) && !m.lost() && !region_map::validate(&m.header(), m.size()))
      return it->second.get();
    c.erase(it);
  }
  region_error e;
  auto reader = reader::region_reader::open(path, true, e);
  if (reader == nullptr) {
    if (e.code == region_errc::permission || e.code == region_errc::io)
      if (read_only_error(path, err)) return nullptr;
    set_error(&err->error, e);
    return nullptr;
  }
  auto r = std::make_unique<PfsCoreRegion>();
  struct stat st {};
  if (fstat(reader->region().fd(), &st) == 0) {
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    r->size = st.st_size;
  }
  r->reader = std::move(reader);
  r->path = path;
  PfsCoreRegion* out = r.get();
  c.emplace(path, std::move(r));
  return out;
}

// ---------------------------------------------------------------------------
// The pending log

enum class op_kind { update, insert, remove, truncate };

struct pending_op {
  std::string path;
  int table = -1;
  op_kind kind = op_kind::update;
  std::vector<value> key;                  // key columns, in table_rules::keys order
  std::vector<std::pair<int, value>> set;  // update: the columns set; insert: every non-key column
  int level = 1;
  std::uint32_t cid = 0;
};

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

bool key_from_row(const table_rules& r, const reader::table_def& t, const PfsCoreValue* row,
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

std::string key_text(const table_rules& r, const std::vector<value>& key) {
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
bool check_value(const reader::table_def& t, int column, PfsCoreValue& v, PfsCoreRegion* region,
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
    case domain::timer: {
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
    case domain::none:
      break;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Replays of the log on one keyed table

// The keys of the rows of a table now in the region.
bool region_keys(PfsCoreRegion& region, const table_rules& r, const reader::table_def& t,
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

std::uint64_t capacity_of(PfsCoreRegion& region, table_id id) {
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
// Commit

struct region_commit {
  PfsCoreRegion* region = nullptr;
  std::unique_ptr<setup_lock_guard> lock;
  std::vector<const pending_op*> ops;
  std::vector<bool> skip;  // per op: finds nothing, do nothing
};

// Checks every change of one region against its current setup (the setup lock is
// held), deciding which ones find nothing.
bool validate(region_commit& rc, PfsCoreWriteError* err) {
  PfsCoreRegion& region = *rc.region;
  const region_map& m = region.reader->region();
  rc.skip.assign(rc.ops.size(), false);
  std::map<int, std::set<std::string>> keys;            // setup_actors / setup_objects: keys present
  std::unordered_map<std::string, std::uint8_t> flags;  // setup_instruments: flags by name
  for (std::size_t i = 0; i < rc.ops.size(); ++i) {
    const pending_op& op = *rc.ops[i];
    const reader::table_def& t = *table_at(op.table);
    const table_rules& r = *rules_of(op.table);
    switch (r.id) {
      case table_id::setup_actors:
      case table_id::setup_objects: {
        auto it = keys.find(op.table);
        if (it == keys.end()) {
          it = keys.emplace(op.table, std::set<std::string>{}).first;
          if (!region_keys(region, r, t, it->second, err)) return false;
        }
        bool skip = false;
        if (!replay_key(it->second, op, r, capacity_of(region, r.id), t.name, skip, err)) return false;
        rc.skip[i] = skip;
        break;
      }
      case table_id::setup_instruments: {
        const std::string& name = op.key[0].s;
        const std::uint32_t index = region.reader->find_class(name);
        if (index == 0) {  // a region of another provider: the instrument is not there
          rc.skip[i] = true;
          break;
        }
        auto it = flags.find(name);
        if (it == flags.end())
          it = flags
                   .emplace(name, layout::load_relaxed(
                                      m.array<layout::class_record>(layout::kArrayClasses)[index - 1].flags))
                   .first;
        const int enabled = flag_of(op, t, "enabled"), timed = flag_of(op, t, "timed"),
                  trace = flag_of(op, t, "trace_enabled");
        std::uint8_t f = it->second;
        auto put = [&f](int v, std::uint8_t bit) {
          if (v >= 0) f = static_cast<std::uint8_t>(v ? f | bit : f & ~bit);
        };
        put(enabled, layout::kFlagEnabled);
        put(timed, layout::kFlagTimed);
        put(trace, layout::kFlagTraced);
        if (enabled == 0) f = static_cast<std::uint8_t>(f & ~layout::kFlagTraced);
        if ((f & layout::kFlagTraced) && !(f & layout::kFlagEnabled)) {
          write_error(err, kSerializationFailure, "could not enable tracing of instrument " + dq(name),
                      "Another transaction disabled the instrument after this transaction changed it.",
                      "Retry the transaction.");
          return false;
        }
        it->second = f;
        break;
      }
      case table_id::setup_timers: {
        const value* v = find_set(op, reader::column_index(t, "timer_name"));
        const timers::timer_kind k = v != nullptr ? timers::timer_from_name(v->s) : timers::timer_kind::none;
        if (k == timers::timer_kind::none ||
            layout::load_relaxed(m.header().timers[static_cast<int>(k)].available) == 0) {
          write_error(err, kInvalidParameterValue, "timer " + dq(v != nullptr ? v->s : "") + " is not available",
                      "The region " + dq(region.path) + " was replaced by a provider without this timer.",
                      "The timers available in this region are " + available_timers(m.header()) + ".");
          return false;
        }
        break;
      }
      default:
        break;
    }
  }
  return true;
}

const std::string& text_at(const pending_op& op, const reader::table_def& t, const char* column) {
  static const std::string kEmpty;
  const value* v = find_set(op, reader::column_index(t, column));
  return v != nullptr ? v->s : kEmpty;
}

// Applies one change (validated) through the agent's setup functions.
void apply(const region_map& m, const PfsCoreRegion& region, const pending_op& op) {
  const reader::table_def& t = *table_at(op.table);
  const table_rules& r = *rules_of(op.table);
  if (op.kind == op_kind::truncate) {
    switch (r.truncate) {
      case kHideCurrent:
        setup::truncate_events(m, layout::kTruncateCurrent);
        break;
      case kHideHistory:
        setup::truncate_events(m, layout::kTruncateHistory);
        break;
      case kHideHistoryLong:
        setup::truncate_events(m, layout::kTruncateHistoryLong);
        break;
      case kResetWait:
        setup::reset_wait_summaries(m);
        break;
      case kResetThread:
        setup::reset_thread_summaries(m);
        break;
      case kResetFile:
        setup::reset_file_summaries(m);
        break;
      case kResetTable:
        setup::reset_table_summaries(m);
        break;
      case kEmptyActors:
        setup::truncate_actors(m);
        break;
      case kEmptyObjects:
        setup::truncate_objects(m);
        break;
      default:
        break;
    }
    return;
  }
  switch (r.id) {
    case table_id::setup_instruments:
      setup::set_instrument(m, region.reader->find_class(op.key[0].s), flag_of(op, t, "enabled"),
                            flag_of(op, t, "timed"), flag_of(op, t, "trace_enabled"));
      break;
    case table_id::setup_consumers: {
      const int id = setup::consumer_from_name(op.key[0].s);
      if (id >= 0 && flag_of(op, t, "enabled") >= 0)
        setup::set_consumer(m, static_cast<std::uint32_t>(id), flag_of(op, t, "enabled") == 1);
      break;
    }
    case table_id::setup_timers:
      setup::set_wait_timer(m, timers::timer_from_name(text_at(op, t, "timer_name")));
      break;
    case table_id::threads:
      setup::set_thread(m, static_cast<std::uint64_t>(op.key[0].i), flag_of(op, t, "instrumented"),
                        flag_of(op, t, "history"));
      break;
    case table_id::setup_actors: {
      const std::string &host = op.key[0].s, &user = op.key[1].s, &role = op.key[2].s;
      if (op.kind == op_kind::insert)
        setup::insert_actor(m, host, user, role, flag_of(op, t, "enabled") == 1,
                            flag_of(op, t, "history") == 1, flag_of(op, t, "trace_enabled") == 1);
      else if (op.kind == op_kind::remove)
        setup::delete_actor(m, host, user, role);
      else
        setup::update_actor(m, host, user, role, flag_of(op, t, "enabled"), flag_of(op, t, "history"),
                            flag_of(op, t, "trace_enabled"));
      break;
    }
    case table_id::setup_objects: {
      const std::string &schema = op.key[1].s, &name = op.key[2].s;
      if (op.kind == op_kind::insert)
        setup::insert_object(m, schema, name, flag_of(op, t, "enabled") == 1, flag_of(op, t, "timed") == 1);
      else if (op.kind == op_kind::remove)
        setup::delete_object(m, schema, name);
      else
        setup::update_object(m, schema, name, flag_of(op, t, "enabled"), flag_of(op, t, "timed"));
      break;
    }
    default:
      break;
  }
}

bool commit(const volatile sig_atomic_t* interrupt, std::uint32_t timeout_ms, PfsCoreWriteError* err) {
  std::map<std::string, region_commit> regions;  // by path: locks taken in path order
  for (const pending_op& op : pending_log()) regions[op.path].ops.push_back(&op);
  for (auto& [path, rc] : regions) {
    rc.region = writable_region(path, err);
    if (rc.region == nullptr) return false;
    rc.lock = std::make_unique<setup_lock_guard>(rc.region->reader->region(), interrupt, timeout_ms);
    if (rc.lock->interrupted()) {
      set_error(&err->error, PFS_CORE_INTERRUPTED, "interrupted while waiting for the setup lock");
      return false;
    }
    if (rc.lock->timed_out()) {
      set_error(&err->error, PFS_CORE_LOCK_TIMEOUT,
                "could not lock the setup of region file " + dq(path) + " within " +
                    std::to_string(timeout_ms) + " ms",
                "The setup lock of region file " + dq(path) + " stayed taken for " +
                    std::to_string(timeout_ms) + " ms, by another session or by the instrumented program.");
      return false;
    }
    if (!rc.lock->locked()) {
      write_error(err, kLockNotAvailable, "could not lock the setup of region file " + dq(path),
                  std::string("Locking byte ") + std::to_string(layout::kSetupLockByte) +
                      " of the file failed: " + std::strerror(errno) + ".");
      return false;
    }
  }
  for (auto& [path, rc] : regions)
    if (!validate(rc, err)) return false;
  for (auto& [path, rc] : regions) {
    const region_map& m = rc.region->reader->region();
    for (std::size_t i = 0; i < rc.ops.size(); ++i)
      if (!rc.skip[i]) apply(m, *rc.region, *rc.ops[i]);
  }
  pending_log().clear();
  return true;  // the guards release the locks
}

// ---------------------------------------------------------------------------
// Statement-time changes

bool check_op(int table, int op, const table_rules*& r, const reader::table_def*& t, PfsCoreWriteError* err) {
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

bool update_row(const char* path, int table, const PfsCoreValue* old_row, PfsCoreValue* new_row,
                const bool* set, int level, std::uint32_t cid, PfsCoreWriteError* err) {
  const table_rules* r;
  const reader::table_def* t;
  if (!check_op(table, PFS_CORE_OP_UPDATE, r, t, err)) return false;
  pending_op op;
  op.path = path;
  op.table = table;
  op.kind = op_kind::update;
  op.level = level;
  op.cid = cid;
  if (!key_from_row(*r, *t, old_row, op.key, err)) return false;
  PfsCoreRegion* region = nullptr;  // for the timers of setup_timers
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
  // The trace worklog: tracing needs the instrument enabled; disabling it ends tracing.
  if (r->id == table_id::setup_instruments) {
    const int e = reader::column_index(*t, "enabled"), tr = reader::column_index(*t, "trace_enabled");
    if (e >= 0 && tr >= 0 && !new_row[e].isnull) {
      const bool enabled = text_of(new_row[e]) == "YES";
      const value* trace = find_set(op, tr);
      if (trace != nullptr && trace->s == "YES" && !enabled) {
        write_error(err, kObjectNotInPrerequisiteState, "instrument " + dq(op.key[0].s) + " cannot be traced while it is disabled",
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

bool insert_row(const char* path, int table, PfsCoreValue* row, bool skip_duplicate, bool* skipped, int level,
                std::uint32_t cid, PfsCoreWriteError* err) {
  const table_rules* r;
  const reader::table_def* t;
  if (skipped != nullptr) *skipped = false;
  if (!check_op(table, PFS_CORE_OP_INSERT, r, t, err)) return false;
  PfsCoreRegion* region = writable_region(path, err);
  if (region == nullptr) return false;
  pending_op op;
  op.path = path;
  op.table = table;
  op.kind = op_kind::insert;
  op.level = level;
  op.cid = cid;
  for (std::size_t c = 0; c < t->columns.size(); ++c) {
    const char* name = t->columns[c].name;
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
  if (!check_op(table, PFS_CORE_OP_DELETE, r, t, err)) return false;
  pending_op op;
  op.path = path;
  op.table = table;
  op.kind = op_kind::remove;
  op.level = level;
  op.cid = cid;
  if (!key_from_row(*r, *t, old_row, op.key, err)) return false;
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

}  // namespace
}  // namespace pfs::fdw

struct PfsCoreOverlay {
  const pfs::reader::table_def* table = nullptr;
  const pfs::fdw::modify::table_rules* rules = nullptr;  // nullptr: not a keyed table
  std::vector<int> keys;
  bool hide_all = false;   // truncated: rows of the region are gone
  unsigned zero_all = 0;   // summaries reset: every row's statistics are 0
  unsigned zero_file = 0;  // file statistics reset: the file rows' are 0
  std::map<std::string, pfs::fdw::modify::row_state> rows;
  std::vector<std::string> order;  // keys of rows, in the order first changed
  std::size_t next_extra = 0;
};

namespace pfs::fdw {
namespace {

void replay_row(PfsCoreOverlay& o, const pending_op& op) {
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

void give(PfsCoreValue& out, const value& v, bool text) {
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

bool is_text(const reader::table_def& t, int c) {
  return t.columns[static_cast<std::size_t>(c)].type == reader::column_type::text;
}

void zero_stats(const PfsCoreOverlay& o, PfsCoreValue* row, bool& changed) {
  unsigned effects = o.zero_all;
  if (o.zero_file != 0) {
    const int e = reader::column_index(*o.table, "event_name");
    if (e >= 0 && !row[e].isnull && text_of(row[e]).substr(0, 13) == "wait/io/file/") effects |= o.zero_file;
  }
  if (effects == 0) return;
  for (std::size_t c = 0; c < o.table->columns.size(); ++c) {
    if (o.table->columns[c].type != reader::column_type::int64 || !is_stat_column(o.table->columns[c].name))
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
  const unsigned seen = t->writes.seen;
  const unsigned file_only = t->writes.seen_file_rows;
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
    const unsigned e = rules_of(op.table)->truncate & seen;
    if (e == 0) continue;
    any = true;
    if (e & (kHideCurrent | kHideHistory | kHideHistoryLong)) {
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
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      row[c] = PfsCoreValue{};
      row[c].isnull = true;
    }
    for (std::size_t k = 0; k < o.keys.size(); ++k) give(row[o.keys[k]], rs.key[k], is_text(t, o.keys[k]));
    for (const auto& [c, v] : rs.values) give(row[c], v, is_text(t, c));
    return true;
  }
  return false;
}

}  // namespace
}  // namespace pfs::fdw

// ---------------------------------------------------------------------------
// The C ABI

extern "C" {

int pfs_core_table_operations(int table) noexcept {
  const pfs::fdw::modify::table_rules* r = pfs::fdw::rules_of(table);
  return r != nullptr ? r->ops : 0;
}

bool pfs_core_column_updatable(int table, int column) noexcept {
  const pfs::fdw::modify::table_rules* r = pfs::fdw::rules_of(table);
  const pfs::reader::table_def* t = pfs::fdw::table_at(table);
  if (r == nullptr || t == nullptr || column < 0 || static_cast<std::size_t>(column) >= t->columns.size())
    return false;
  return pfs::fdw::listed(r->updatable, t->columns[static_cast<std::size_t>(column)].name);
}

bool pfs_core_column_is_key(int table, int column) noexcept {
  const pfs::fdw::modify::table_rules* r = pfs::fdw::rules_of(table);
  const pfs::reader::table_def* t = pfs::fdw::table_at(table);
  if (r == nullptr || t == nullptr || column < 0 || static_cast<std::size_t>(column) >= t->columns.size())
    return false;
  return pfs::fdw::listed(r->keys, t->columns[static_cast<std::size_t>(column)].name);
}

bool pfs_core_write_check(const char* path, PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  clear_write_error(err);
  if (path == nullptr) {
    set_error(&err->error, PFS_CORE_INTERNAL, "no region path given");
    return false;
  }
  return guarded(&err->error, false, [&] { return writable_region(path, err) != nullptr; });
}

bool pfs_core_write_update(const char* path, int table, const PfsCoreValue* old_row, PfsCoreValue* new_row,
                           const bool* set, int level, std::uint32_t cid, PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  clear_write_error(err);
  return guarded(&err->error, false,
                 [&] { return update_row(path, table, old_row, new_row, set, level, cid, err); });
}

bool pfs_core_write_insert(const char* path, int table, PfsCoreValue* row, bool skip_duplicate, bool* skipped,
                           int level, std::uint32_t cid, PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  clear_write_error(err);
  return guarded(&err->error, false,
                 [&] { return insert_row(path, table, row, skip_duplicate, skipped, level, cid, err); });
}

bool pfs_core_write_delete(const char* path, int table, const PfsCoreValue* old_row, int level,
                           std::uint32_t cid, PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  clear_write_error(err);
  return guarded(&err->error, false, [&] { return delete_row(path, table, old_row, level, cid, err); });
}

bool pfs_core_write_truncate(const char* path, int table, int level, std::uint32_t cid,
                             PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  clear_write_error(err);
  return guarded(&err->error, false, [&] { return truncate_table(path, table, level, cid, err); });
}

bool pfs_core_write_pending(void) noexcept { return !pfs::fdw::pending_log().empty(); }

bool pfs_core_write_commit(const volatile sig_atomic_t* interrupt, std::uint32_t timeout_ms,
                           PfsCoreWriteError* err) noexcept {
  using namespace pfs::fdw;
  clear_write_error(err);
  if (pending_log().empty()) return true;
  return guarded(&err->error, false, [&] { return commit(interrupt, timeout_ms, err); });
}

void pfs_core_write_discard(void) noexcept { pfs::fdw::pending_log().clear(); }

void pfs_core_write_forget_regions(void) noexcept { pfs::fdw::writables().clear(); }

void pfs_core_write_subxact_end(int level, bool commit) noexcept {
  auto& ops = pfs::fdw::pending_log();
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
  clear_write_error(err);
  if (path == nullptr || pending_log().empty()) return nullptr;
  return guarded(&err->error, static_cast<PfsCoreOverlay*>(nullptr),
                 [&] { return overlay_begin(path, table, cid).release(); });
}

int pfs_core_overlay_row(PfsCoreOverlay* overlay, PfsCoreValue* row) noexcept {
  if (overlay == nullptr) return 0;
  try {
    return pfs::fdw::overlay_row(*overlay, row);
  } catch (...) {
    return -2;  // out of memory (copying the key)
  }
}

bool pfs_core_overlay_extra(PfsCoreOverlay* overlay, PfsCoreValue* row) noexcept {
  if (overlay == nullptr) return false;
  return pfs::fdw::overlay_extra(*overlay, row);
}

void pfs_core_overlay_rewind(PfsCoreOverlay* overlay) noexcept {
  if (overlay == nullptr) return;
  overlay->next_extra = 0;
  for (auto& [k, rs] : overlay->rows) rs.seen = false;
}

void pfs_core_overlay_free(PfsCoreOverlay* overlay) noexcept { delete overlay; }

}  // extern "C"

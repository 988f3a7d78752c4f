// The write path of the FDW core (setup changes from SQL), shared by its files:
// core_write_rules.cpp, core_write_regions.cpp, core_write_log.cpp,
// core_write_commit.cpp, core_write_overlay.cpp and the C ABI in core_modify.cpp.
// Each function is declared under the file that owns it.
//
// The rules are the table registry's (agent/reader/tables.cpp, write_rules). The log
// is replayed three ways:
// - statement time: an INSERT checks the key against the region's rows with the
//   transaction's earlier changes applied (duplicate, full);
// - scans (the overlay): the changes of earlier commands are applied to the rows a
//   scan produces, so a transaction reads its own writes;
// - commit: under the setup lock of each region, the log is checked against the
//   current setup (a row inserted meanwhile by another session, an instrument
//   disabled meanwhile), then applied in order through the agent's setup functions,
//   each change writing only the columns it set.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agent/region/meter_layout.h"
#include "agent/region/setup.h"
#include "fdw/core_internal.h"
#include "timers/timer.h"

namespace pfs::fdw::write {

using reader::table_id;
using namespace reader;  // the write rules: truncate_effect, write_op

// A table's write rules (the registry's) with its id.
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

template <std::size_t N>
bool listed(const char* const (&names)[N], const char* name) noexcept {
  for (const char* n : names)
    if (n != nullptr && std::strcmp(n, name) == 0) return true;
  return false;
}

using domain = reader::value_domain;

// SQLSTATEs of write errors (PostgreSQL's errcodes.h names, without ERRCODE_).
inline constexpr const char* kFeatureNotSupported = "0A000";
inline constexpr const char* kStringDataRightTruncation = "22001";
inline constexpr const char* kInvalidParameterValue = "22023";
inline constexpr const char* kNotNullViolation = "23502";
inline constexpr const char* kUniqueViolation = "23505";
inline constexpr const char* kSerializationFailure = "40001";
inline constexpr const char* kInsufficientPrivilege = "42501";
inline constexpr const char* kProgramLimitExceeded = "54000";
inline constexpr const char* kObjectNotInPrerequisiteState = "55000";
inline constexpr const char* kLockNotAvailable = "55P03";
inline constexpr const char* kInternalError = "XX000";

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

// ---- core_write_rules.cpp

// The rules of a table that SQL may change; nullptr for a read-only table.
const table_rules* rules_of(int table) noexcept;
bool is_stat_column(const char* name) noexcept;
value from_core(const PfsCoreValue& v, bool text);
bool same(const PfsCoreValue& a, const PfsCoreValue& b, bool text);
void set_static(PfsCoreValue& v, std::string_view s);
// Replaces v with s unless it already holds exactly s.
void normalize_to(PfsCoreValue& v, std::string_view s);
domain domain_of(const char* column, std::size_t& max_bytes);
// MySQL's default of a column of an inserted row.
std::string_view default_of(const char* column);
std::string dq(std::string_view s);
void write_error(PfsCoreWriteError* err, const char* sqlstate, std::string_view message,
                 std::string_view detail = {}, std::string_view hint = {});
void clear_write_error(PfsCoreWriteError* err) noexcept;
bool ascii_iequals(std::string_view a, std::string_view b);
std::string_view text_of(const PfsCoreValue& v);
// The names of the timers a region's provider calibrated, for hints.
std::string available_timers(const layout::region_header& h);

// ---- core_write_regions.cpp

// Writable mappings by region path.
using writable_cache = std::unordered_map<std::string, std::unique_ptr<mapped_region>>;
writable_cache& writables() noexcept;
mapped_region* writable_region(const std::string& path, PfsCoreWriteError* err);

// ---- core_write_log.cpp

std::vector<pending_op>& pending_log() noexcept;
// A key as one string (map key): each part tagged with its kind and length.
std::string encode_key(const std::vector<value>& key);
// The key columns of a table (indexes), in rules order.
std::vector<int> key_columns(const table_rules& r, const reader::table_def& t);
const value* find_set(const pending_op& op, int column);
int flag_of(const pending_op& op, const reader::table_def& t, const char* column);
// The keys of the rows of a table now in the region.
bool region_keys(mapped_region& region, const table_rules& r, const reader::table_def& t,
                 std::set<std::string>& out, PfsCoreWriteError* err);
std::uint64_t capacity_of(mapped_region& region, table_id id);
// Applies one logged change to the set of keys present; for INSERT checks the key
// is new and the table has room. skip: a change that finds no row (another session
// deleted it) does nothing.
bool replay_key(std::set<std::string>& present, const pending_op& op, const table_rules& r,
                std::uint64_t capacity, const char* table_name, bool& skip, PfsCoreWriteError* err);
bool update_row(const char* path, int table, const PfsCoreValue* old_row, PfsCoreValue* new_row,
                const bool* set, int level, std::uint32_t cid, PfsCoreWriteError* err);
// named: the columns the INSERT names (nullptr: none); NULL there is an error.
bool insert_row(const char* path, int table, PfsCoreValue* row, const bool* named, bool skip_duplicate,
                bool* skipped, int level, std::uint32_t cid, PfsCoreWriteError* err);
bool delete_row(const char* path, int table, const PfsCoreValue* old_row, int level, std::uint32_t cid,
                PfsCoreWriteError* err);
bool truncate_table(const char* path, int table, int level, std::uint32_t cid, PfsCoreWriteError* err);
void put_value(std::vector<std::pair<int, value>>& into, int column, const value& v);

// ---- core_write_commit.cpp

bool commit(const volatile sig_atomic_t* interrupt, std::uint32_t timeout_ms, PfsCoreWriteError* err);

// ---- core_write_directory.cpp: a server reading a directory (path names one)

bool is_region_directory(const char* path);
bool directory_update(const char* dir, int table, const PfsCoreValue* old_row, PfsCoreValue* new_row,
                      const bool* set, int level, std::uint32_t cid, PfsCoreWriteError* err);
bool directory_insert(const char* dir, int table, PfsCoreValue* row, const bool* named, bool skip_duplicate,
                      bool* skipped, int level, std::uint32_t cid, PfsCoreWriteError* err);
bool directory_delete(const char* dir, int table, const PfsCoreValue* old_row, int level, std::uint32_t cid,
                      PfsCoreWriteError* err);
bool directory_truncate(const char* dir, int table, int level, std::uint32_t cid, PfsCoreWriteError* err);
std::unique_ptr<PfsCoreOverlay> directory_overlay_begin(const char* dir, int table, std::uint32_t cid);
int directory_overlay_row(PfsCoreOverlay& o, PfsCoreValue* row);
bool directory_overlay_extra(PfsCoreOverlay& o, PfsCoreValue* row);

// ---- core_write_overlay.cpp

std::unique_ptr<PfsCoreOverlay> overlay_begin(const char* path, int table, std::uint32_t cid);
int overlay_row(PfsCoreOverlay& o, PfsCoreValue* row);
bool overlay_extra(PfsCoreOverlay& o, PfsCoreValue* row);

}  // namespace pfs::fdw::write

namespace pfs::fdw::write {
// The overlay of one region of a directory server.
struct overlay_part {
  std::int64_t pid = 0;
  std::string program;
  std::unique_ptr<PfsCoreOverlay> overlay;
};
}  // namespace pfs::fdw::write

struct PfsCoreOverlay {
  // A directory server's: one overlay per region that has changes (the rest unused).
  std::vector<pfs::fdw::write::overlay_part> parts;
  std::size_t next_part = 0;  // the part whose extra rows come next
  const pfs::reader::table_def* table = nullptr;
  const pfs::fdw::write::table_rules* rules = nullptr;  // nullptr: not a keyed table
  std::vector<int> keys;
  bool hide_all = false;        // truncated: rows of the region are gone
  std::uint64_t zero_all = 0;   // summaries reset: every row's statistics are 0
  std::uint64_t zero_file = 0;  // file (socket) statistics reset: the file (socket) rows' are 0
  std::map<std::string, pfs::fdw::write::row_state> rows;
  std::vector<std::string> order;  // keys of rows, in the order first changed
  std::size_t next_extra = 0;
};

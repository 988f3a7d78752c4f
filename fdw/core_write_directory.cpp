// Writes through a server that reads a directory of regions: each change goes to
// the region its row came from (the row's process_id), or, for an INSERT that names
// no process and for TRUNCATE, to every region of the directory. The log then holds
// one change per region file, so the commit locks every region involved, checks
// them all, and applies all or none, as for several servers in one transaction.
// The overlay of a scan is one per region, chosen by the row's process_id.
#include "fdw/core_write.h"

namespace pfs::fdw::write {

namespace {

struct directory_region {
  std::string file;
  std::int64_t pid = 0;
  bool alive = false;
  std::string program;
  bool writable = false;
  PfsCoreWriteError why{};  // not writable: why
};

// The regions of a directory, listed once per command while the directory does not
// change: a statement changing many rows does not list it for each.
struct directory_listing {
  std::string dir;
  std::uint32_t cid = 0;
  timespec mtime{};  // of the directory: a file added, removed or renamed changes it
  bool valid = false;
  std::vector<directory_region> regions;
};

directory_listing& last_listing() {
  static directory_listing listing;
  return listing;
}

// Unmaps the writable mappings of files that left the directory: the workers of a
// pre-forking server come and go, and each gone one would keep a mapping and a
// descriptor in this backend. (A change still pending for one fails at commit.)
void forget_departed(const std::string& dir, const std::vector<std::string>& files) {
  const std::string prefix = dir.ends_with('/') ? dir : dir + '/';
  writable_cache& w = writables();
  for (auto it = w.begin(); it != w.end();) {
    const std::string& path = it->first;
    const bool in_dir = path.starts_with(prefix) && path.find('/', prefix.size()) == std::string::npos;
    if (in_dir && !std::binary_search(files.begin(), files.end(), path))
      it = w.erase(it);
    else
      ++it;
  }
}

const std::vector<directory_region>* regions_of(const std::string& dir, std::uint32_t cid,
                                                PfsCoreWriteError* err) {
  directory_listing& l = last_listing();
  struct stat st {};
  const bool listed = stat(dir.c_str(), &st) == 0;
  if (l.valid && listed && l.dir == dir && l.cid == cid && l.mtime.tv_sec == st.st_mtim.tv_sec &&
      l.mtime.tv_nsec == st.st_mtim.tv_nsec)
    return &l.regions;
  l.valid = false;
  std::vector<std::string> files;
  if (!list_region_files(dir, files, &err->error)) return nullptr;
  forget_departed(dir, files);
  std::vector<directory_region> regions;
  for (const std::string& file : files) {
    directory_region d;
    d.file = file;
    const mapped_region* r = writable_region(file, &d.why);
    std::shared_ptr<reader::region_reader> read_only;
    if (r == nullptr) {  // a region SQL shows but cannot change: a change naming it fails
      region_error e;
      read_only = reader::region_reader::open(file, false, e, follows_symlinks(file));
      if (read_only == nullptr) continue;  // damaged: its rows were never shown
    }
    d.writable = r != nullptr;
    const region_map& m = r != nullptr ? r->reader->region() : read_only->region();
    d.pid = static_cast<std::int64_t>(layout::load_relaxed(m.header().pid));
    d.alive = m.provider_alive();
    const std::size_t n = ::strnlen(m.header().program, layout::kProgramLen);
    if (n < layout::kProgramLen) d.program.assign(m.header().program, n);
    regions.push_back(std::move(d));
  }
  l.dir = dir;
  l.cid = cid;
  l.mtime = st.st_mtim;
  l.regions = std::move(regions);
  l.valid = true;
  return &l.regions;
}

int process_column(int table) { return static_cast<int>(table_at(table)->columns.size()) + kExtraProcessId; }

// The region file of the process that wrote row (the live one if the pid was reused).
const directory_region* region_of_row(const char* dir, const std::vector<directory_region>& regions,
                                      int table, const PfsCoreValue* row, PfsCoreWriteError* err) {
  const PfsCoreValue& pid = row[process_column(table)];
  const directory_region* found = nullptr;
  if (!pid.isnull)
    for (const directory_region& d : regions)
      if (d.pid == pid.value && (found == nullptr || d.alive)) found = &d;
  if (found == nullptr && pid.isnull)
    write_error(err, kObjectNotInPrerequisiteState, "row has no process_id",
                "A server that reads a directory needs the process_id column to know which region a row "
                "belongs to.",
                "Declare the column process_id bigint in the foreign table (IMPORT FOREIGN SCHEMA does).");
  else if (found == nullptr)
    write_error(
        err, kObjectNotInPrerequisiteState,
        "no region of process " + std::to_string(pid.value) + " in region directory " + dq(dir),
        "No region file in the directory was written by that process; it may have been removed.",
        "Name the process_id of a row the directory shows, or leave process_id NULL in an INSERT to add "
        "the row to every region.");
  if (found != nullptr && !found->writable) {
    *err = found->why;
    return nullptr;
  }
  return found;
}

// Every region must be writable for a change that goes to all of them.
bool all_writable(const std::vector<directory_region>& regions, PfsCoreWriteError* err) {
  for (const directory_region& d : regions)
    if (!d.writable) {
      *err = d.why;
      return false;
    }
  return true;
}

}  // namespace

bool is_region_directory(const char* path) {
  struct stat st {};
  return path != nullptr && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool directory_update(const char* dir, int table, const PfsCoreValue* old_row, PfsCoreValue* new_row,
                      const bool* set, int level, std::uint32_t cid, PfsCoreWriteError* err) {
  const auto* regions = regions_of(dir, cid, err);
  if (regions == nullptr) return false;
  const directory_region* d = region_of_row(dir, *regions, table, old_row, err);
  if (d == nullptr) return false;
  return update_row(d->file.c_str(), table, old_row, new_row, set, level, cid, err);
}

bool directory_insert(const char* dir, int table, PfsCoreValue* row, const bool* named, bool skip_duplicate,
                      bool* skipped, int level, std::uint32_t cid, PfsCoreWriteError* err) {
  const auto* regions = regions_of(dir, cid, err);
  if (regions == nullptr) return false;
  if (!row[process_column(table)].isnull) {
    const directory_region* d = region_of_row(dir, *regions, table, row, err);
    return d != nullptr &&
           insert_row(d->file.c_str(), table, row, named, skip_duplicate, skipped, level, cid, err);
  }
  // No process named: a row in every region (skipped only where every one has it).
  if (!all_writable(*regions, err)) return false;
  bool all_skipped = !regions->empty();
  for (const directory_region& d : *regions) {
    bool one_skipped = false;
    if (!insert_row(d.file.c_str(), table, row, named, skip_duplicate, &one_skipped, level, cid, err))
      return false;
    all_skipped = all_skipped && one_skipped;
  }
  if (skipped != nullptr) *skipped = all_skipped;
  return true;
}

bool directory_delete(const char* dir, int table, const PfsCoreValue* old_row, int level, std::uint32_t cid,
                      PfsCoreWriteError* err) {
  const auto* regions = regions_of(dir, cid, err);
  if (regions == nullptr) return false;
  const directory_region* d = region_of_row(dir, *regions, table, old_row, err);
  return d != nullptr && delete_row(d->file.c_str(), table, old_row, level, cid, err);
}

bool directory_truncate(const char* dir, int table, int level, std::uint32_t cid, PfsCoreWriteError* err) {
  const auto* regions = regions_of(dir, cid, err);
  if (regions == nullptr || !all_writable(*regions, err)) return false;
  for (const directory_region& d : *regions)
    if (!truncate_table(d.file.c_str(), table, level, cid, err)) return false;
  return true;
}

std::unique_ptr<PfsCoreOverlay> directory_overlay_begin(const char* dir, int table, std::uint32_t cid) {
  PfsCoreWriteError err{};
  const auto* regions = regions_of(dir, cid, &err);
  if (regions == nullptr) return nullptr;
  auto o = std::make_unique<PfsCoreOverlay>();
  o->table = table_at(table);
  for (const directory_region& d : *regions) {
    std::unique_ptr<PfsCoreOverlay> part = overlay_begin(d.file.c_str(), table, cid);
    if (part == nullptr) continue;
    o->parts.push_back(overlay_part{d.pid, d.program, std::move(part)});
  }
  if (o->parts.empty()) return nullptr;
  return o;
}

int directory_overlay_row(PfsCoreOverlay& o, PfsCoreValue* row) {
  const PfsCoreValue& pid = row[o.table->columns.size() + kExtraProcessId];
  if (pid.isnull) return 0;
  for (overlay_part& p : o.parts)
    if (p.pid == pid.value) return overlay_row(*p.overlay, row);
  return 0;
}

bool directory_overlay_extra(PfsCoreOverlay& o, PfsCoreValue* row) {
  const std::size_t n = o.table->columns.size();
  for (; o.next_part < o.parts.size(); ++o.next_part) {
    overlay_part& p = o.parts[o.next_part];
    if (!overlay_extra(*p.overlay, row)) continue;
    row[n + kExtraProcessId] = PfsCoreValue{};
    row[n + kExtraProcessId].value = p.pid;
    row[n + kExtraProgram] = PfsCoreValue{};
    row[n + kExtraProgram].isnull = p.program.empty();
    row[n + kExtraProgram].text = p.program.data();
    row[n + kExtraProgram].len = static_cast<std::uint32_t>(p.program.size());
    return true;
  }
  return false;
}

}  // namespace pfs::fdw::write

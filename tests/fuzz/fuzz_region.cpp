// libFuzzer target: a region file is untrusted input. Each input is written to a
// file and read the ways PostgreSQL reads it: header validation, the reader's scan
// of every table, the FDW core's cache, scans into row sets, and its write path
// (UPDATE, INSERT, TRUNCATE validated and committed into the file). A quarter of
// the inputs also have their file truncated after it was mapped, at a point the
// input chooses, so the SIGBUS guard is fuzzed too. Any crash, sanitizer report or
// input slower than a second (-timeout=1) is a failure.
//
// Build and run: bash scripts/fuzz.sh [SECONDS]   (clang, libFuzzer; corpus in
// tests/fuzz/corpus, seeds written by tools/pfs_fixture)
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "agent/reader/reader.h"
#include "agent/region/region.h"
#include "fdw/pfs_core.h"

namespace {

std::string g_path;

bool write_file(const std::uint8_t* data, std::size_t size) {
  unlink(g_path.c_str());
  int fd = open(g_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  close(fd);
  return done == size;
}

std::uint64_t hash_of(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < size; i += 1 + size / 256) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

void truncate_file(std::size_t to) {
  int fd = open(g_path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  if (ftruncate(fd, static_cast<off_t>(to)) != 0) std::perror("ftruncate");
  close(fd);
}

// The first row of a row set as PfsCoreValue cells (every column wanted).
std::vector<PfsCoreValue> first_row(const PfsCoreRowset& rs, int table) {
  std::vector<PfsCoreValue> row(static_cast<std::size_t>(pfs_core_column_count(table)));
  for (auto& v : row) v.isnull = true;
  if (rs.nrows == 0) return {};
  for (int k = 0; k < rs.ncells; ++k) {
    const PfsCoreCell& c = rs.cells[k];
    PfsCoreValue& v = row[static_cast<std::size_t>(rs.columns[k])];
    v.isnull = c.isnull;
    if (c.isnull) continue;
    if (pfs_core_column_type(table, rs.columns[k]) == PFS_CORE_TEXT) {
      v.text = rs.text + c.value;
      v.len = c.len;
    } else {
      v.value = c.value;
    }
  }
  return row;
}

void set_text(std::vector<PfsCoreValue>& row, int table, const char* column, const char* text) {
  const int c = pfs_core_column_find(table, column);
  if (c < 0 || static_cast<std::size_t>(c) >= row.size()) return;
  row[static_cast<std::size_t>(c)] =
      PfsCoreValue{text, static_cast<std::uint32_t>(std::strlen(text)), 0, false, false};
}

void fuzz_writes(PfsCoreRegion* region) {
  PfsCoreError err;
  PfsCoreWriteError werr;
  const int instruments = pfs_core_table_find("setup_instruments");
  const int actors = pfs_core_table_find("setup_actors");
  const int history_long = pfs_core_table_find("events_waits_history_long");
  PfsCoreScan* scan = pfs_core_scan_begin(region, instruments, nullptr, nullptr, 0, 0, SIZE_MAX, &err);
  const PfsCoreRowset* rs = scan != nullptr ? pfs_core_scan_next(scan, nullptr, &err) : nullptr;
  if (rs != nullptr) {
    std::vector<PfsCoreValue> old_row = first_row(*rs, instruments);
    if (!old_row.empty()) {
      std::vector<PfsCoreValue> new_row = old_row;
      set_text(new_row, instruments, "enabled", "no");
      std::vector<char> set(new_row.size(), 0);
      set[static_cast<std::size_t>(pfs_core_column_find(instruments, "enabled"))] = 1;
      pfs_core_write_update(g_path.c_str(), instruments, old_row.data(), new_row.data(),
                            reinterpret_cast<const bool*>(set.data()), 1, 1, &werr);
    }
  }
  pfs_core_scan_end(scan);
  std::vector<PfsCoreValue> actor(static_cast<std::size_t>(pfs_core_column_count(actors)));
  for (auto& v : actor) v.isnull = true;
  set_text(actor, actors, "host", "%");
  set_text(actor, actors, "user", "fuzz");
  set_text(actor, actors, "role", "%");
  bool skipped = false;
  pfs_core_write_insert(g_path.c_str(), actors, actor.data(), nullptr, true, &skipped, 1, 2, &werr);
  pfs_core_write_truncate(g_path.c_str(), history_long, 1, 3, &werr);
  pfs_core_write_commit(nullptr, 0, &werr);
  pfs_core_write_discard();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_path = "/dev/shm/pfs_fuzz_" + std::to_string(getpid()) + ".region";
  if (!pfs_core_init()) return 1;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return -1;  // regions this large add nothing but time
  // The header checks on the bytes themselves.
  pfs::region_map::validate(data, size);
  if (!write_file(data, size)) return 0;
  const std::uint64_t h = hash_of(data, size);
  const bool cut = size > 0 && h % 4 == 0;

  // The reader library alone.
  {
    pfs::region_error e;
    auto r = pfs::reader::region_reader::open(g_path, false, e);
    if (r != nullptr)
      for (const auto& t : pfs::reader::tables()) {
        std::vector<pfs::reader::row> rows;
        r->scan(t, rows);
        r->estimated_rows(t);
      }
  }

  // The FDW core: region cache, scans of every table, then writes.
  PfsCoreError err;
  PfsCoreRegion* region = pfs_core_region_get(1, g_path.c_str(), &err);
  if (region != nullptr) {
    if (cut) truncate_file(static_cast<std::size_t>((h >> 8) % size));
    for (int t = 0; t < pfs_core_table_count(); ++t) {
      pfs_core_estimated_rows(region, t);
      // Small pieces, so that the history_long tables pause and resume; and a
      // condition on the first column.
      const PfsCoreQual not_null{0, PFS_QUAL_IS_NOT_NULL, false, 0, nullptr, nullptr, nullptr};
      PfsCoreScan* scan =
          pfs_core_scan_begin(region, t, nullptr, &not_null, static_cast<int>(h % 2), 4, 4096, &err);
      for (const PfsCoreRowset* rs = nullptr; scan != nullptr;) {
        rs = pfs_core_scan_next(scan, nullptr, &err);
        if (rs == nullptr || rs->last) break;
      }
      pfs_core_scan_end(scan);
    }
    region = pfs_core_region_get(1, g_path.c_str(), &err);  // reopened if it changed
    if (region != nullptr) fuzz_writes(region);
  }
  pfs_core_region_forget_all();
  pfs_core_write_forget_regions();
  unlink(g_path.c_str());
  return 0;
}

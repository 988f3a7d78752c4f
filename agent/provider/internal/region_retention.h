// Retention of the regions of exited processes in a directory of regions made by a
// PFS_REGION pattern with %p: the writer side removes them once they are older than
// PFS_REGION_KEEP, and the oldest beyond PFS_REGION_KEEP_COUNT, so a server that
// forks for every connection keeps a bounded directory. Readers never remove
// anything.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pfs::detail {

struct retention_policy {
  std::uint64_t keep_ns = 0;        // PFS_REGION_KEEP: 0 = no limit by age
  std::uint32_t keep_count = 1000;  // PFS_REGION_KEEP_COUNT: exited regions kept; 0 = no limit
  bool any() const { return keep_ns != 0 || keep_count != 0; }
};

// A region younger than this is never removed (a process that has just created
// its file may not hold its alive lock yet).
inline constexpr std::uint64_t kRetentionMinAgeNs = 10ull * 1000 * 1000 * 1000;

// Parses "30s", "10min", "2h", "1d" or plain seconds; false when malformed.
bool parse_keep_duration(const char* text, std::uint64_t* ns);

// Removes from directory dir_fd the regions matching file-name pattern base_pattern
// (the base name of PFS_REGION, with %p) whose provider is gone (no alive lock) and
// that are older than the policy allows: last changed more than keep_ns ago, or
// beyond the keep_count most recent exited ones. A file is renamed to a temporary
// name first and removed only if it is still the one found dead, so a process that
// reused the pid and made its region there meanwhile keeps it. Two passes over the
// listing (the count's cutoff, then the removals), so a directory of any size comes
// back to keep_count in one sweep. System calls only (its one buffer is mapped), no
// allocation but glibc's DIR (it runs in a fork child handler too). Returns the
// count removed.
std::size_t sweep_exited_regions(int dir_fd, const char* base_pattern, const retention_policy& policy,
                                 std::uint64_t now_realtime_ns);

}  // namespace pfs::detail

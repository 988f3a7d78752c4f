// The regions pfs_otlp exports: --region names a region file, or a directory whose
// regular files are regions (one per process, PFS_REGION with %p), as the FDW's
// region_directory takes them: hidden files and the agent's temporary files are
// left out.
#pragma once

#include <string>
#include <vector>

namespace pfs::otlp {

// The region files of path, sorted; is_directory says which kind path was. False
// (error set) when path cannot be listed or read.
bool list_regions(const std::string& path, std::vector<std::string>& out, bool& is_directory,
                  std::string& error);

// Where the cursors are kept when --state is not given: <region>.otlp-state next to a
// region file, .pfs_otlp-state (hidden: not taken for a region) inside a directory.
std::string default_state_path(const std::string& path, bool is_directory);

}  // namespace pfs::otlp

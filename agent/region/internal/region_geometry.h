// The region's geometry, for region.cpp: the array directory for given sizes, the
// record size each array has in this layout version, and a new region's header.
#pragma once

#include <cstdint>

#include "agent/region/region.h"
#include "agent/region/region_layout.h"

namespace pfs::geometry {

// Fills the array directory for sizes s; returns the file size.
std::uint64_t plan_layout(const region_sizes& s, layout::array_desc (&arrays)[layout::kArrayCount]);

// The record size this layout version gives array id (0 when it has none fixed).
std::uint64_t known_stride(std::uint32_t id, std::uint32_t max_sql_text_length);

// A new region's header: magic, version, sizes, identity, timers' bases, default
// consumers and the array directory.
void init_header(layout::region_header& h, const region_sizes& s, std::uint64_t file_size);

}  // namespace pfs::geometry

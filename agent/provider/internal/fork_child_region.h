// A forked child's region (fork_child_region.cpp): what of the parent's region the
// child's sparse copy holds, and how the child makes it its own. Both run in the
// fork child handler (agent_fork.cpp).
#pragma once

#include <cstddef>

#include "agent/provider/internal/agent_internal.h"

namespace pfs::detail {

// The byte ranges of the parent's region the child's copy takes: of the header,
// the inherited and class-level arrays and the forking thread's (me, may be
// nullptr) slot of the per-thread arrays, the parts that the parent's file holds as
// data (data, n_data: region_map::data_map). At most cap; returns their number.
std::size_t fork_copy_plan(const region_map& r, const thread_context* me, const region_map::byte_range* data,
                           std::size_t n_data, region_map::byte_range* out, std::size_t cap);

// After the copy of those ranges (copied, n): the other threads leave, every
// statistic and history restarts from zero; only the copied ranges are touched.
void make_region_the_childs(agent_state& a, thread_context* me, const region_map::byte_range* copied,
                            std::size_t n);

}  // namespace pfs::detail

// pfs_otlp's state file: for each region it exports (by pid and creation time), the
// per-thread, per-table cursors of the last export, so that a restarted exporter
// goes on where the last one stopped and sends no span twice, and the links the
// last round kept (region_memory), so that the events it left for the next round
// join their parents' traces. Written whole to a temporary file and renamed over the
// old one, so a crash leaves one or the other.
//
//   pfs_otlp state 2
//   region <pid> <creation_time_ns>
//   cursor <thread_id> <kind> <end_event_id> <event_id>
//   link <thread_id> <event_id> <nesting_event_id> <kind> <short_wait> <has_trace>
//        <trace_high> <trace_low> <parent_span>           (one line)
//   ...                                   (a region line, then its cursors and links)
// An older pfs_otlp skips the link lines.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "tools/otlp/otlp_events.h"

namespace pfs::otlp {

using region_key = std::pair<std::uint64_t, std::uint64_t>;  // pid, creation_time_ns
inline region_key key_of(const region_identity& r) { return {r.pid, r.creation_time_ns}; }
using export_state = std::map<region_key, region_memory>;

// The state saved; empty when the file is missing or unreadable.
export_state load_state(const std::string& path);
// False (error set) when the file could not be written.
bool save_state(const std::string& path, const export_state& state, std::string& error);

}  // namespace pfs::otlp

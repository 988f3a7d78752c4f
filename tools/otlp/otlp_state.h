// pfs_otlp's state file: the region it belongs to (pid and creation time) and the
// per-thread, per-table cursors of the last export, so that a restarted exporter
// goes on where the last one stopped and sends no span twice. Written whole to a
// temporary file and renamed over the old one, so a crash leaves one or the other.
//
//   pfs_otlp state 1
//   region <pid> <creation_time_ns>
//   cursor <thread_id> <kind> <end_event_id> <event_id>
#pragma once

#include <string>

#include "tools/otlp/otlp_events.h"

namespace pfs::otlp {

// The cursors saved for this region; empty when the file is missing, unreadable or
// of another region (a new process at the same path starts over).
cursors load_state(const std::string& path, const region_identity& region);
// False (error set) when the file could not be written.
bool save_state(const std::string& path, const region_identity& region, const cursors& where,
                std::string& error);

}  // namespace pfs::otlp

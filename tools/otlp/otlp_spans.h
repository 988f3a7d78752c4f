// Span building: a region's completed events become spans. Ids are deterministic
// (a hash of the region's identity, the thread and an event id), so a span has the
// same id in every export: span id from the event, parent span id from the nearest
// ancestor that is a span (NESTING_EVENT_ID, past waits too short to be spans),
// trace id from the root of the event's nesting chain (the topmost ancestor the
// region still holds, or the missing ancestor where the chain breaks). Times:
// TIMER_START/END (picoseconds from the region's creation, CYCLE's calibration
// epochs already applied by the reader) plus the creation time, in Unix ns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tools/otlp/otlp_events.h"
#include "tools/otlp/otlp_model.h"

namespace pfs::otlp {

span_id make_span_id(const region_identity& region, std::uint64_t thread_id, std::uint64_t event_id);
trace_id make_trace_id(const region_identity& region, std::uint64_t thread_id, std::uint64_t root_event_id);

// Appends one span per completed event of events [first, first + count), in their
// order: a batch at a time, so that only one batch of spans is held.
void build_spans(const region_events& events, std::size_t first, std::size_t count, std::vector<span>& out);

}  // namespace pfs::otlp

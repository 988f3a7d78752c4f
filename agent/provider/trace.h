// Trace files of the trace worklog: see agent_trace.cpp.
#pragma once

#include <string>

#include "agent/provider/event_path.h"

namespace pfs::detail {

extern std::string g_trace_dir;  // where thread.<actor>.<thread_id> files go

// Flushes and closes the calling thread's trace file (thread exit, shutdown).
void trace_close(trace_file& f);

}  // namespace pfs::detail

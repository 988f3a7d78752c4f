// Trace files of the trace worklog: see agent_trace.cpp.
#pragma once

#include <string>

#include "agent/provider/event_path.h"

namespace pfs::detail {

std::string& trace_dir();  // where thread.<actor>.<thread_id> files go
// Set in a forked child: its threads' ids may repeat the parent's, whose trace
// files they would overwrite, so a child writes none.
extern bool g_trace_stopped;

// Flushes and closes the calling thread's trace file (thread exit, shutdown).
void trace_close(trace_file& f);
// Closes it without writing what is buffered (a forked child's copy of a parent's
// thread: the parent writes those lines).
void trace_discard(trace_file& f);

}  // namespace pfs::detail

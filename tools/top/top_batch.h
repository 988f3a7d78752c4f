// pfs_top -b: refreshes of one view printed as plain text, like top's batch mode
// (for logs, pipes and tests).
#pragma once

#include "tools/top/top_options.h"
#include "tools/top/top_source.h"

namespace pfs::top {

// Until o.iterations refreshes or stop is set; the exit status (1 when the server
// was unreachable at the start or no read of the view succeeded).
int run_batch(const options& o, source& db, const volatile int& stop);

// "pfs_top - 12:00:00  host:port/db  schema ps  view 1 waits  interval 1.00 s  refresh 3"
std::string header_line(const options& o, const source& db, const view& v, double seconds, int refresh);

}  // namespace pfs::top

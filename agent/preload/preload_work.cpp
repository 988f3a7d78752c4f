// The units-of-work C ABI, exported by libpfs_preload.so: a program that marks its
// statements, stages and transactions through pfs_c.h and runs under the
// interposer calls these, so its work and the interposed pthread and file waits
// share one agent and the waits nest in the statements.
#include "agent/provider/internal/preload_api.h"

#define PFS_WORK_API extern "C" __attribute__((visibility("default")))
#include "agent/provider/internal/work_c_abi.inc"

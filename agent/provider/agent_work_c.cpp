// The units-of-work C ABI of the static agent library (see work_c_abi.inc).
#include "agent/provider/agent_internal.h"
#include "agent/provider/work_api.h"

#define PFS_WORK_API extern "C"
#include "agent/provider/work_c_abi.inc"

// The units-of-work C ABI of the static agent library (see work_c_abi.inc).
#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/work_api.h"

#define PFS_WORK_API extern "C"
#include "agent/provider/internal/work_c_abi.inc"

// The flags byte of a class (pfs_class_flags) as the C++ API tests it on every
// call: a relaxed atomic load, as setup changes store it (one plain byte load on
// x86-64 and AArch64, and no data race for TSan when a thread of the program
// changes the setup while others lock).
#pragma once

#include "agent/provider/pfs_c.h"

namespace pfs::detail {

inline bool class_enabled(const volatile unsigned char* flags) {
  return (__atomic_load_n(flags, __ATOMIC_RELAXED) & PFS_ENABLED) != 0;
}
inline bool class_timed(const volatile unsigned char* flags) {
  return (__atomic_load_n(flags, __ATOMIC_RELAXED) & PFS_TIMED) != 0;
}

}  // namespace pfs::detail

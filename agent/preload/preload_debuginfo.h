// Function names of a stripped module from its build-id debug file (Debian's
// -dbgsym packages: /usr/lib/debug/.build-id/xx/yyyy.debug); preload_debuginfo.cpp.
#pragma once

#include <link.h>

namespace pfs::preload {

// The function that contains file address addr (a run-time address minus the
// module's l_addr) of module lm, mapped from map_start (_dl_find_object's
// dlfo_map_start: its ELF header), from the module's debug file when one is
// installed: its name (in the mapped file, valid for the life of the process) and
// its start as a file address. False when there is no debug file or no function.
bool debug_file_symbol(const link_map* lm, const void* map_start, ElfW(Addr) addr, const char** name,
                       ElfW(Addr) * start);

}  // namespace pfs::preload

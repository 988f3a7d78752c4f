// The instrumented globals of the init-order programs (tests/end_to_end/test_static_init.cpp).
#pragma once

#include "agent/provider/pfs.h"

extern pfs::mutex g_queue_lock;  // globals_a.cpp
extern pfs::shared_mutex g_map_lock;
void lock_globals_a(int n);  // locks each of globals_a.cpp's objects n times

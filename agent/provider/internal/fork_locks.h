// The mutexes the fork handlers hold across fork() (agent_fork.cpp), together on
// one page of their own.
//
// After fork() the parent's and the child's pages are copy-on-write, and both
// release these mutexes: every page holding one cost a page fault in each process
// (dear on a virtual machine that shadows page tables). On one page
// that the kernel gives a child zero-filled (MADV_WIPEONFORK), the parent writes
// its page without a fault (the child shares nothing of it) and the child finds
// every mutex unlocked (a zeroed std::mutex is an unlocked one) without writing.
#pragma once

#include <mutex>

namespace pfs::detail {

struct fork_locks {
  std::mutex registry;    // agent_state::registry_mutex
  std::mutex accounts;    // agent_state::accounts_mutex
  std::mutex reattach;    // agent_state::reattach_mutex
  std::mutex files;       // the file registry (agent_io.cpp)
  std::mutex tables;      // table declarations (agent_io.cpp)
  std::mutex sockets;     // the socket registry (agent_socket.cpp)
  std::mutex data_locks;  // the data locks' free stacks (agent_data_locks.cpp)
};

// The process's fork_locks, made at the first call.
fork_locks& fork_locked();

// Whether a forked child finds fork_locked()'s mutexes unlocked (the page was
// wiped). False where the kernel has no MADV_WIPEONFORK (before Linux 4.14) and
// under ThreadSanitizer, whose model of a mutex would not see the wipe: the child
// releases them then, as the parent does.
bool fork_locks_wiped_in_child();

}  // namespace pfs::detail

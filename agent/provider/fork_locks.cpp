#include "agent/provider/internal/fork_locks.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace pfs::detail {
namespace {

struct lock_page {
  fork_locks* locks = nullptr;
  bool wiped = false;
};

lock_page make_lock_page() {
  static_assert(sizeof(fork_locks) <= 4096);
  const long page = sysconf(_SC_PAGESIZE);
  void* p = mmap(nullptr, page > 0 ? static_cast<std::size_t>(page) : 4096, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    static fork_locks fallback;
    return {&fallback, false};
  }
#if defined(__SANITIZE_THREAD__)
  const bool wiped = false;
#else
  const bool wiped = madvise(p, static_cast<std::size_t>(page), MADV_WIPEONFORK) == 0;
#endif
  return {new (p) fork_locks, wiped};
}

const lock_page& the_page() {
  static const lock_page page = make_lock_page();  // never unmapped: the mutexes live as long as the process
  return page;
}

}  // namespace

fork_locks& fork_locked() { return *the_page().locks; }

bool fork_locks_wiped_in_child() { return the_page().wiped; }

}  // namespace pfs::detail

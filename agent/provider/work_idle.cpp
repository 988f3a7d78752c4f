// The idle wait: a thread waiting for work between requests (a wait named "idle").
#include "agent/provider/internal/work_api.h"
#include "agent/provider/internal/work_internal.h"

namespace pfs::detail::work_c {

using namespace pfs;
using namespace pfs::detail;

int start_idle_wait(pfs_wait_locker* locker, const char* file, unsigned line) {
  agent_state* a = g_agent;
  if (a == nullptr || !load_relaxed(g_hot.recording)) return 0;
  const pfs_key idle = load_acquire(a->idle_class);
  if (idle == 0) return 0;
  wait_locker& l = *reinterpret_cast<wait_locker*>(locker);
  // No instance: the idle class has per-thread and global statistics only.
  const auto cflags =
      static_cast<std::uint8_t>(load_relaxed(a->classes[idle - 1].derived) & ~kFlagInstanceStats);
  if (!begin_wait_flags(l, idle, cflags, 0, kOpIdle)) return 0;
  if (l.event.timer != 0) l.event.timer = timer_kind_of(load_relaxed(a->header->idle_timer));
  start_running(l, file, line);
  store_relaxed(l.thread->rec->idle, std::uint8_t{1});
  return 1;
}

void end_idle_wait(pfs_wait_locker* locker) {
  wait_locker& l = *reinterpret_cast<wait_locker*>(locker);
  end_wait(l, false);
  store_relaxed(l.thread->rec->idle, std::uint8_t{0});
}

}  // namespace pfs::detail::work_c

// Forked children: with %p in PFS_REGION a child records into a region of its own;
// without it, it records nothing.
//
// A child has a copy of the parent's memory, and its instrumented objects point
// into the parent's region (a shared mapping): it must not write there. With a
// pattern, the child handler copies the region into a new, sparse file and maps it
// at the same address (region_map::move_to_copy), so those pointers now reach the
// child's own file. Then the copy becomes the child's: the parent's other threads
// are gone, every statistic and history starts at zero, and what the child
// inherited stays (classes, instances, open files and sockets, setup, the forking
// thread). What the copy holds and leaves as holes: fork_child_region.cpp. The
// registries' mutexes are taken before fork; the parent releases them after it,
// and the child finds them wiped (fork_locks.h) or releases them where the page
// cannot be wiped, so no lock is inherited held; the child handler itself makes system
// calls and plain stores only (the one allocation, the region's path string, is
// glibc's malloc, which glibc makes usable in fork child handlers).
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/fork_child_region.h"
#include "agent/provider/internal/preload_api.h"
#include "agent/provider/internal/trace.h"
#include "agent/region/safe_files.h"

namespace pfs::detail {
namespace {

fork_report g_report{fork_outcome::not_recording, 0, "", nullptr};
char g_child_path[4096];
char g_child_dir[4096];
char g_child_tmp[256 + 32];  // a file name and the random suffix
// The parent's data and the child's copy: 16 KiB each, static (no allocation in
// the child handler); a region more scattered is copied by whole arrays.
region_map::byte_range g_parent_data[1024];
region_map::byte_range g_copy_plan[1024];

// A child sweeps the pattern's directory (region_retention.h) at most once a
// second for its parent: the parent decides before the fork (process-local
// clock), the child does the work after making its region.
std::uint64_t g_last_sweep_ns = 0;
bool g_sweep_due = false;
constexpr std::uint64_t kSweepIntervalNs = 1000000000;

std::uint64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void prepare() {
  agent_state* a = g_agent;
  if (a == nullptr) return;
  g_sweep_due = false;
  if (!a->region_pattern.empty() && a->retention.any()) {
    const std::uint64_t now = realtime_ns();
    if (now - g_last_sweep_ns >= kSweepIntervalNs) {
      g_last_sweep_ns = now;
      g_sweep_due = true;
    }
  }
  a->registry_mutex.lock();
  lock_io_registries(true);
  lock_socket_registry(true);
  lock_data_lock_registry(true);
  a->accounts_mutex.lock();
  a->reattach_mutex.lock();
}

void unlock_all(bool is_child) {
  agent_state* a = g_agent;
  if (a == nullptr) return;
  if (is_child && fork_locks_wiped_in_child()) return;  // a fresh page: nothing is locked
  a->reattach_mutex.unlock();
  a->accounts_mutex.unlock();
  lock_data_lock_registry(false);
  lock_socket_registry(false);
  lock_io_registries(false);
  a->registry_mutex.unlock();
}

void parent() { unlock_all(false); }

void stop_recording() {
  store_relaxed(g_hot.recording, false);
  tls_context = no_context();
}

// The child's region is made where another user may have planted names
// (safe_files.h): in its directory (opened without following a symbolic link and
// checked), under a random name, renamed to the expanded pattern unless a symbolic
// link, hard link or other file waits there.
void make_own_region(agent_state* a);

// The agent's own system calls here (openat, lseek, copy_file_range, renameat ...)
// are the agent's, not the program's: the interposer passes them by (busy), as it
// would otherwise instrument them, symbolizing their call site in every child.
void child() {
  unlock_all(true);
  agent_state* a = g_agent;
  g_report = {fork_outcome::not_recording, 0, "", nullptr};
  if (a == nullptr || !agent_running()) return;
  mark_agent_busy(true);
  make_own_region(a);
  if (g_sweep_due && g_report.outcome == fork_outcome::own_region) sweep_pattern_directory(*a);
  mark_agent_busy(false);
}

void make_own_region(agent_state* a) {
  if (a->region_pattern.empty()) {
    g_report.outcome = fork_outcome::no_pattern;
    stop_recording();
    return;
  }
  const auto failed = [](int error, const char* reason) {
    g_report = {fork_outcome::failed, error, g_child_path, reason};
    stop_recording();
  };
  const std::size_t n = sizeof(g_child_path);
  if (!expand_region_path(a->region_pattern.c_str(), static_cast<long>(getpid()), g_child_path, n)) {
    g_child_path[0] = '\0';
    failed(ENAMETOOLONG, nullptr);
    return;
  }
  const char* base = safe_files::split_path(g_child_path, g_child_dir, sizeof(g_child_dir));
  if (base == nullptr) {
    failed(ENAMETOOLONG, nullptr);
    return;
  }
  const int dir_fd = safe_files::open_directory(g_child_dir);
  if (dir_fd < 0) {
    failed(errno, errno == ELOOP ? "its directory is a symbolic link" : nullptr);
    return;
  }
  const char* refused = safe_files::unsafe_directory(dir_fd, a->allow_unsafe_dir);
  if (refused == nullptr) refused = safe_files::unsafe_destination(dir_fd, base);
  if (refused != nullptr) {
    close(dir_fd);
    failed(EEXIST, refused);
    return;
  }
  thread_context* me = tls_context;
  if (me == no_context()) me = nullptr;
  tls_context = no_context();
  const std::size_t data = a->region.data_map(g_parent_data, std::size(g_parent_data));
  const std::size_t ranges =
      fork_copy_plan(a->region, me, g_parent_data, data, g_copy_plan, std::size(g_copy_plan));
  if (!a->region.move_to_copy(dir_fd, base, g_child_tmp, sizeof(g_child_tmp), g_copy_plan, ranges)) {
    const int e = errno;
    close(dir_fd);
    failed(e, nullptr);
    return;
  }
  g_trace_stopped = true;
  make_region_the_childs(*a, me, g_copy_plan, ranges);
  if (!a->region.publish_copy(dir_fd, g_child_tmp, base, g_child_path, &refused)) {
    const int e = errno;
    unlinkat(dir_fd, g_child_tmp, 0);
    close(dir_fd);
    failed(e, refused);
    return;
  }
  close(dir_fd);
  g_report.outcome = fork_outcome::own_region;
  g_report.path = g_child_path;
  tls_context = me;
  restart_cycle_watch_in_child(*a->header);
}

}  // namespace

bool expand_region_path(const char* pattern, long pid, char* out, std::size_t cap) {
  char digits[24];
  int nd = 0;
  for (long v = pid < 0 ? 0 : pid; nd == 0 || v != 0; v /= 10) digits[nd++] = static_cast<char>('0' + v % 10);
  std::size_t o = 0;
  for (const char* p = pattern; *p != '\0'; ++p) {
    if (p[0] == '%' && p[1] == 'p') {
      for (int k = nd - 1; k >= 0; --k) {
        if (o + 1 >= cap) return false;
        out[o++] = digits[k];
      }
      ++p;
    } else {
      if (o + 1 >= cap) return false;
      out[o++] = *p;
    }
  }
  out[o] = '\0';
  return true;
}

void sweep_pattern_directory(const agent_state& a) {
  if (a.region_pattern.empty() || !a.retention.any()) return;
  char dir[4096];
  const char* base = safe_files::split_path(a.region_pattern.c_str(), dir, sizeof(dir));
  if (base == nullptr || std::strstr(base, "%p") == nullptr || std::strstr(dir, "%p") != nullptr) return;
  const int dir_fd = safe_files::open_directory(dir);
  if (dir_fd < 0) return;
  sweep_exited_regions(dir_fd, base, a.retention, realtime_ns());
  close(dir_fd);
}

void install_fork_handlers() { pthread_atfork(prepare, parent, child); }

const fork_report& last_fork_report() { return g_report; }

}  // namespace pfs::detail

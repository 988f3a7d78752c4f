// Socket instances (descriptor -> socket_instances row) and the C ABI of socket
// waits.
//
// A row is made when a socket is created (socket, socketpair, accept: system
// calls of microseconds) under a process-local mutex that is never held across the
// real call, and freed at close. Waits find their row through the fd map with one
// atomic load, lock-free (socket_path.h).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/socket_path.h"

namespace pfs::detail {

socket_hot_state g_sock;

namespace {

static_assert(PFS_SOCKET_CREATE == kOpSocketCreate && PFS_SOCKET_SELECT == kOpSocketSelect);

struct socket_registry {
  std::mutex& mutex = fork_locked().sockets;
  std::vector<std::uint32_t> fd_map;
};
socket_registry* g_socket_registry = nullptr;

wait_locker& as_locker(pfs_wait_locker* l) { return *reinterpret_cast<wait_locker*>(l); }

// IP text and port of a sockaddr; false (ip "", port 0) for a unix or unknown one.
bool address_text(const void* addr, unsigned len, char (&ip)[kSocketIpLen], std::uint32_t& port) {
  ip[0] = '\0';
  port = 0;
  if (addr == nullptr || len < sizeof(sa_family_t)) return false;
  sa_family_t family;
  std::memcpy(&family, addr, sizeof(family));
  if (family == AF_INET && len >= sizeof(sockaddr_in)) {
    sockaddr_in a;
    std::memcpy(&a, addr, sizeof(a));
    port = ntohs(a.sin_port);
    return inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip)) != nullptr;
  }
  if (family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    sockaddr_in6 a;
    std::memcpy(&a, addr, sizeof(a));
    port = ntohs(a.sin6_port);
    return inet_ntop(AF_INET6, &a.sin6_addr, ip, sizeof(ip)) != nullptr;
  }
  return false;
}

// The owner thread writes the address under its own seqlock (like a file's name).
void write_address(socket_instance& s, const void* addr, unsigned len) {
  char ip[kSocketIpLen];
  std::uint32_t port = 0;
  if (!address_text(addr, len, ip, port)) ip[0] = '\0';
  const std::uint32_t seq = load_relaxed(s.addr_seq) | 1u;
  store_relaxed(s.addr_seq, seq);
  std::atomic_thread_fence(std::memory_order_release);
  const std::size_t n = std::strlen(ip);
  for (std::size_t i = 0; i < kSocketIpLen; ++i) store_relaxed(s.ip[i], i < n ? ip[i] : '\0');
  store_relaxed(s.port, port);
  store_release(s.addr_seq, seq + 1);
}

// Under the registry mutex: the row of fd leaves socket_instances; its statistics
// go to its class's bucket. The record keeps address and version until reused.
// expected (1-based, 0 = any): after a close, the number may already be another
// thread's new socket, whose row stays.
void free_socket_locked(int fd, std::uint32_t expected = 0) {
  if (fd < 0 || static_cast<std::uint32_t>(fd) >= g_sock.fd_map_size) return;
  const std::uint32_t index = load_relaxed(g_sock.fd_map[fd]);
  if (expected != 0 && index != expected) return;
  store_relaxed(g_sock.fd_map[fd], 0u);
  if (index == 0 || index == kUntrackedFd) return;
  socket_instance& s = g_sock.sockets[index - 1];
  const std::uint32_t key = load_relaxed(s.class_index);
  auto* buckets = g_agent->region.array<io_stats>(kArrayClassIo);
  if (buckets != nullptr && key >= 1 && key <= g_agent->max_classes) {
    fold_io(buckets[key - 1].read, s.stats.read);
    fold_io(buckets[key - 1].write, s.stats.write);
    fold_io(buckets[key - 1].misc, s.stats.misc);
  }
  const std::uint32_t word = load_relaxed(s.lock);
  store_release(s.lock, (word & ~kStateMask) | kStateFree);
}

bool usable() { return g_agent != nullptr && g_socket_registry != nullptr && agent_running(); }

}  // namespace

void lock_socket_registry(bool lock) {
  if (g_socket_registry == nullptr) return;
  if (lock)
    g_socket_registry->mutex.lock();
  else
    g_socket_registry->mutex.unlock();
}

void init_sockets(agent_state& a, const region_sizes& sizes) {
  g_socket_registry = new socket_registry;  // lives as long as the process, as the file registry
  g_socket_registry->fd_map.assign(sizes.max_file_handles, 0);
  g_sock.sockets = a.region.array<socket_instance>(kArraySockets);
  g_sock.socket_waits = a.region.array<wait_stat>(kArraySocketWaitStats);
  g_sock.socket_count =
      g_sock.sockets == nullptr ? 0 : static_cast<std::uint32_t>(a.region.count(kArraySockets));
  g_sock.fd_map = g_socket_registry->fd_map.data();
  g_sock.fd_map_size = static_cast<std::uint32_t>(g_socket_registry->fd_map.size());
}

// A plugin's sockets leave socket_instances as a closed socket does.
std::uint32_t unload_sockets(const std::vector<bool>& plugin_class) {
  if (g_socket_registry == nullptr) return 0;
  std::lock_guard<std::mutex> guard(g_socket_registry->mutex);
  std::uint32_t n = 0;
  for (std::uint32_t fd = 0; fd < g_sock.fd_map_size; ++fd) {
    const std::uint32_t index = load_relaxed(g_sock.fd_map[fd]);
    if (index == 0 || index == kUntrackedFd) continue;
    const std::uint32_t key = load_relaxed(g_sock.sockets[index - 1].class_index);
    if (key < 1 || key > plugin_class.size() || !plugin_class[key - 1]) continue;
    free_socket_locked(static_cast<int>(fd));
    ++n;
  }
  return n;
}

// The interposer: fd is known not to be recorded (not a socket, or no room).
void mark_untracked_fd(int fd) {
  if (fd >= 0 && static_cast<std::uint32_t>(fd) < g_sock.fd_map_size)
    store_relaxed(g_sock.fd_map[fd], kUntrackedFd);
}

}  // namespace pfs::detail

using namespace pfs;
using namespace pfs::detail;

extern "C" {

pfs_key pfs_register_socket(const char* category, const char* name) {
  if (g_agent == nullptr) pfs_init_from_env();
  return register_class(kKindSocket, category, name);
}

int pfs_init_socket(pfs_key key, int fd, const void* addr, unsigned addr_len) {
  if (!usable() || fd < 0 || !region_attached()) return 0;
  std::lock_guard<std::mutex> guard(g_socket_registry->mutex);
  free_socket_locked(fd);  // a row left by a close the agent did not see
  if (static_cast<std::uint32_t>(fd) >= g_sock.fd_map_size || key == 0 || key > g_agent->max_classes ||
      load_relaxed(g_hot.classes[key - 1].kind) != kKindSocket) {
    if (key != 0) bump_lost(kLostSocketInstances);
    mark_untracked_fd(fd);
    return 0;
  }
  for (std::uint32_t i = 0; i < g_sock.socket_count; ++i) {
    socket_instance& s = g_sock.sockets[i];
    const std::uint32_t word = load_relaxed(s.lock);
    if ((word & kStateMask) != kStateFree) continue;
    store_relaxed(s.lock, (word & ~kStateMask) | kStateDirty);
    std::atomic_thread_fence(std::memory_order_release);
    store_relaxed(s.class_index, key);
    store_relaxed(s.identity, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&s)));
    store_relaxed(s.thread_id, pfs_current_thread_id());
    store_relaxed(s.fd, fd);
    store_relaxed(s.state, kSocketActive);
    reset_io(s.stats.read);
    reset_io(s.stats.write);
    reset_io(s.stats.misc);
    zero_stat(g_sock.socket_waits[i]);
    write_address(s, addr, addr_len);
    store_release(s.lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
    store_relaxed(g_sock.fd_map[fd], i + 1);
    return 1;
  }
  bump_lost(kLostSocketInstances);
  mark_untracked_fd(fd);
  return 0;
}

void pfs_set_socket_address(int fd, const void* addr, unsigned addr_len) {
  if (g_agent == nullptr) return;
  if (socket_instance* s = socket_of_fd(fd)) write_address(*s, addr, addr_len);
}

void pfs_set_socket_state(int fd, int state) {
  if (g_agent == nullptr) return;
  if (socket_instance* s = socket_of_fd(fd))
    store_relaxed(s->state, state == PFS_SOCKET_STATE_IDLE ? kSocketIdle : kSocketActive);
}

void pfs_set_socket_owner(int fd) {
  if (!usable()) return;
  if (socket_instance* s = socket_of_fd(fd)) store_relaxed(s->thread_id, pfs_current_thread_id());
}

pfs_key pfs_socket_class(int fd) {
  if (g_agent == nullptr) return 0;
  const socket_instance* s = socket_of_fd(fd);
  return s == nullptr ? 0 : load_relaxed(s->class_index);
}

int pfs_start_socket_wait(pfs_wait_locker* locker, int fd, int op, const char* file, unsigned line) {
  if (g_agent == nullptr || op < PFS_SOCKET_CREATE || op > PFS_SOCKET_SELECT) return 0;
  wait_locker& l = as_locker(locker);
  if (!begin_socket_wait(l, socket_of_fd(fd), op)) return 0;
  start_running(l, file, line);
  return 1;
}

void pfs_end_socket_wait(pfs_wait_locker* locker, int64_t bytes) {
  end_socket_wait(as_locker(locker), bytes);
}

void pfs_end_socket_close_wait(pfs_wait_locker* locker, int fd) {
  wait_locker& l = as_locker(locker);
  const auto index = static_cast<std::uint32_t>(static_cast<socket_instance*>(l.object) - g_sock.sockets) + 1;
  end_socket_wait(l, -1);
  std::lock_guard<std::mutex> guard(g_socket_registry->mutex);
  free_socket_locked(fd, index);
}

void pfs_destroy_socket(int fd) {
  if (g_socket_registry == nullptr || fd < 0 || static_cast<std::uint32_t>(fd) >= g_sock.fd_map_size) return;
  const std::uint32_t index = load_relaxed(g_sock.fd_map[fd]);
  if (index == 0) return;
  if (index == kUntrackedFd) {  // no row: the descriptor number is the closing thread's
    store_relaxed(g_sock.fd_map[fd], 0u);
    return;
  }
  std::lock_guard<std::mutex> guard(g_socket_registry->mutex);
  free_socket_locked(fd);
}

}  // extern "C"

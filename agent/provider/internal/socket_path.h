// The event path of socket io (wait/io/socket/...), inline, on top of io_path.h.
// Same rules: no lock, no allocation, no system call but the timer. A socket's
// instance is found from its descriptor with one atomic load (g_sock.fd_map).
#pragma once

#include "agent/provider/internal/io_path.h"

namespace pfs::detail {

// fd_map values: 0 = not known (the interposer looks at the descriptor once),
// kUntrackedFd = known and not recorded (not a socket, or a socket that found no
// room), else the 1-based socket instance.
inline constexpr std::uint32_t kUntrackedFd = UINT32_MAX;

// Process-local view of the socket array, filled by init_sockets (like g_io).
struct socket_hot_state {
  socket_instance* sockets = nullptr;
  std::uint32_t socket_count = 0;
  wait_stat* socket_waits = nullptr;  // socket_count entries: events_waits_summary_by_instance
  std::uint32_t* fd_map = nullptr;
  std::uint32_t fd_map_size = 0;
};
extern socket_hot_state g_sock;

inline std::uint32_t socket_slot_of_fd(int fd) {
  if (fd < 0 || static_cast<std::uint32_t>(fd) >= g_sock.fd_map_size) return kUntrackedFd;
  return load_relaxed(g_sock.fd_map[fd]);
}

inline socket_instance* socket_of_fd(int fd) {
  const std::uint32_t index = socket_slot_of_fd(fd);
  return index == 0 || index == kUntrackedFd ? nullptr : &g_sock.sockets[index - 1];
}

inline io_group socket_group_of(int op) {
  if (op == kOpSocketRecv || op == kOpSocketRecvFrom || op == kOpSocketRecvMsg) return io_group::read;
  if (op == kOpSocketSend || op == kOpSocketSendTo || op == kOpSocketSendMsg) return io_group::write;
  return io_group::misc;
}

inline bool begin_socket_wait(wait_locker& l, socket_instance* s, int op) {
  if (s == nullptr || !load_relaxed(g_hot.recording)) return false;
  const std::uint32_t key = load_relaxed(s->class_index);
  if (!begin_wait_flags(l, key, class_flags_of(key), load_relaxed(s->identity), op)) return false;
  wait_record& e = l.event;
  e.object_kind = kObjectSocket;
  e.object_index = static_cast<std::uint32_t>(s - g_sock.sockets) + 1;
  e.object_version = load_relaxed(s->lock) & ~kStateMask;
  l.object = s;
  return true;
}

// bytes: what the call transferred (send/recv), or -1.
inline void end_socket_wait(wait_locker& l, std::int64_t bytes) {
  const std::uint64_t ps = stop_timer(l);
  const bool timed = l.event.timer != 0;
  l.event.number_of_bytes = bytes;
  // socket_summary_*: MySQL's rule (the instrument and global_instrumentation).
  auto* s = static_cast<socket_instance*>(l.object);
  const io_group g = socket_group_of(l.event.operation);
  io_stat& st = g == io_group::read ? s->stats.read : g == io_group::write ? s->stats.write : s->stats.misc;
  add_stat_atomic(st.count, st.sum, st.sum_hi, st.min, st.max, 1, timed, ps);
  if (bytes > 0) __atomic_fetch_add(&st.bytes, static_cast<std::uint64_t>(bytes), __ATOMIC_RELAXED);
  // The socket's row of events_waits_summary_by_instance, under its own consumer.
  if (l.class_flags & kFlagInstanceStats)
    aggregate_shared(g_sock.socket_waits[static_cast<std::uint64_t>(s - g_sock.sockets)], timed, ps);
  aggregate_global(l, timed, ps);
  if (l.thread_flags & kThreadSummary)
    aggregate_single(l.thread->class_stats[l.event.class_index - 1], timed, ps);
  if (timed && l.thread->wait_histogram_of != nullptr) add_to_histogram(*l.thread, l.event.class_index, ps);
  finish_slot(l);
}

}  // namespace pfs::detail

// Socket io for C++ programs: the socket calls with the same arguments and
// results, each recorded as a wait of class wait/io/socket/<category>/<name> on
// the descriptor's socket_instances row (OPERATION in MySQL's words,
// NUMBER_OF_BYTES what was transferred). The real call's result and errno reach
// the caller untouched; a failed call is a wait too.
//
//   pfs_key listener = pfs::socket::register_class("app", "listener");  // wait/io/socket/app/listener
//   pfs_key client = pfs::socket::register_class("app", "client");
//   int l = pfs::socket::socket(listener, AF_INET, SOCK_STREAM, 0);
//   pfs::socket::bind(l, addr, len);                 // IP, PORT: the local address
//   pfs::socket::listen(l, 16);
//   int c = pfs::socket::accept(client, l, nullptr, nullptr);  // a "connect" wait on l;
//   pfs::socket::recv(c, buf, n, 0);                            // c's IP, PORT: the peer
//   pfs::socket::close(c);
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "agent/provider/pfs_c.h"
#include "agent/provider/source_location.h"

namespace pfs::socket {

using where = pfs::source_location;

inline pfs_key register_class(const char* category, const char* name) {
  return pfs_register_socket(category, name);
}

// STATE: idle while the program waits for the next request on the socket.
inline void set_idle(int fd, bool idle) {
  pfs_set_socket_state(fd, idle ? PFS_SOCKET_STATE_IDLE : PFS_SOCKET_STATE_ACTIVE);
}
// THREAD_ID: the calling thread from now on (a connection handed to a worker).
inline void set_owner(int fd) { pfs_set_socket_owner(fd); }

namespace detail {

inline std::int64_t transferred(ssize_t rc) { return rc >= 0 ? static_cast<std::int64_t>(rc) : -1; }
inline std::int64_t none(int) { return -1; }

// One wait on fd around real(); bytes(rc) tells how many bytes it moved.
template <class Real, class Bytes>
auto on_fd(int fd, int op, const where& at, Real&& real, Bytes&& bytes) {
  pfs_wait_locker l;
  const int rec = pfs_start_socket_wait(&l, fd, op, at.file_name(), at.line());
  auto rc = real();
  if (rec) {
    const int saved = errno;
    pfs_end_socket_wait(&l, bytes(rc));
    errno = saved;
  }
  return rc;
}

// A new descriptor gets its row (errno kept).
inline void init(pfs_key key, int fd, const sockaddr* addr, socklen_t len) {
  if (fd < 0) return;
  const int saved = errno;
  pfs_init_socket(key, fd, addr, len);
  errno = saved;
}

}  // namespace detail

inline int socket(pfs_key key, int domain, int type, int protocol) {
  const int fd = ::socket(domain, type, protocol);
  detail::init(key, fd, nullptr, 0);
  return fd;
}

inline int socketpair(pfs_key key, int domain, int type, int protocol, int sv[2]) {
  const int rc = ::socketpair(domain, type, protocol, sv);
  if (rc == 0) {
    detail::init(key, sv[0], nullptr, 0);
    detail::init(key, sv[1], nullptr, 0);
  }
  return rc;
}

// IP and PORT of a bound socket: its local address.
inline int bind(int fd, const sockaddr* addr, socklen_t len, where at = where::current()) {
  const int rc = detail::on_fd(
      fd, PFS_SOCKET_BIND, at, [&] { return ::bind(fd, addr, len); }, detail::none);
  if (rc == 0) {
    // The port the kernel chose for port 0.
    sockaddr_storage local{};
    socklen_t n = sizeof(local);
    const int saved = errno;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &n) == 0)
      pfs_set_socket_address(fd, &local, n);
    else
      pfs_set_socket_address(fd, addr, len);
    errno = saved;
  }
  return rc;
}

// Not a MySQL operation of its own: recorded as "opt" (a setting of the socket).
inline int listen(int fd, int backlog, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_SOCKET_OPT, at, [&] { return ::listen(fd, backlog); }, detail::none);
}

// IP and PORT after connect: the peer.
inline int connect(int fd, const sockaddr* addr, socklen_t len, where at = where::current()) {
  const int rc = detail::on_fd(
      fd, PFS_SOCKET_CONNECT, at, [&] { return ::connect(fd, addr, len); }, detail::none);
  if (rc == 0 || errno == EINPROGRESS) {
    const int saved = errno;
    pfs_set_socket_address(fd, addr, len);
    errno = saved;
  }
  return rc;
}

// A "connect" wait on the listening socket (MySQL's); the new socket's row has
// class key (0: the listener's class) and the peer's address.
inline int accept4(pfs_key key, int fd, sockaddr* addr, socklen_t* len, int flags,
                   where at = where::current()) {
  sockaddr_storage peer{};
  socklen_t n = sizeof(peer);
  const int c = detail::on_fd(
      fd, PFS_SOCKET_CONNECT, at,
      [&] { return ::accept4(fd, reinterpret_cast<sockaddr*>(&peer), &n, flags); }, detail::none);
  if (c >= 0) {
    const int saved = errno;
    if (addr != nullptr && len != nullptr) {
      const socklen_t copy = n < *len ? n : *len;
      __builtin_memcpy(addr, &peer, copy);
      *len = n;
    }
    pfs_init_socket(key != 0 ? key : pfs_socket_class(fd), c, &peer, n);
    errno = saved;
  }
  return c;
}
inline int accept(pfs_key key, int fd, sockaddr* addr, socklen_t* len, where at = where::current()) {
  return accept4(key, fd, addr, len, 0, at);
}

inline ssize_t send(int fd, const void* buf, size_t n, int flags, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_SOCKET_SEND, at, [&] { return ::send(fd, buf, n, flags); }, detail::transferred);
}
inline ssize_t recv(int fd, void* buf, size_t n, int flags, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_SOCKET_RECV, at, [&] { return ::recv(fd, buf, n, flags); }, detail::transferred);
}
inline ssize_t sendto(int fd, const void* buf, size_t n, int flags, const sockaddr* to, socklen_t len,
                      where at = where::current()) {
  return detail::on_fd(
      fd, PFS_SOCKET_SENDTO, at, [&] { return ::sendto(fd, buf, n, flags, to, len); }, detail::transferred);
}
inline ssize_t recvfrom(int fd, void* buf, size_t n, int flags, sockaddr* from, socklen_t* len,
                        where at = where::current()) {
  return detail::on_fd(
      fd, PFS_SOCKET_RECVFROM, at, [&] { return ::recvfrom(fd, buf, n, flags, from, len); },
      detail::transferred);
}
inline ssize_t sendmsg(int fd, const msghdr* msg, int flags, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_SOCKET_SENDMSG, at, [&] { return ::sendmsg(fd, msg, flags); }, detail::transferred);
}
inline ssize_t recvmsg(int fd, msghdr* msg, int flags, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_SOCKET_RECVMSG, at, [&] { return ::recvmsg(fd, msg, flags); }, detail::transferred);
}
inline int shutdown(int fd, int how, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_SOCKET_SHUTDOWN, at, [&] { return ::shutdown(fd, how); }, detail::none);
}

// The row goes whatever close returns (the descriptor is gone either way on Linux).
inline int close(int fd, where at = where::current()) {
  pfs_wait_locker l;
  const int rec = pfs_start_socket_wait(&l, fd, PFS_SOCKET_CLOSE, at.file_name(), at.line());
  if (!rec) pfs_destroy_socket(fd);  // before the number can be reused
  const int rc = ::close(fd);
  if (rec) {
    const int saved = errno;
    pfs_end_socket_close_wait(&l, fd);
    errno = saved;
  }
  return rc;
}

}  // namespace pfs::socket

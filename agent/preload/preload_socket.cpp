// The interposer's sockets: socket, socketpair, accept, accept4, connect, bind,
// listen, send, recv, sendto, recvfrom, sendmsg, recvmsg and shutdown are recorded
// as socket waits (read, write and close on a socket too: preload.cpp), class
// wait/io/socket/preload/<tcp|udp|unix|other> by the socket's family and type.
//
// A descriptor's number says through the provider's fd map (socket_path.h) what
// it is: a socket row, "not recorded" (kUntrackedFd), or not known yet. Sockets
// the program makes through these wrappers get their row at once; any other
// descriptor (inherited, or from a call not wrapped) is looked at with fstat on
// its first io, once: that system call is on the first io of a descriptor only,
// never on the event path after it. open, dup and close reset the number.
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "agent/preload/preload_internal.h"
#include "agent/provider/internal/preload_api.h"

namespace pfs::preload {
namespace {

using namespace pfs::detail;

// Until dlsym resolved the C library's functions: the system calls themselves.
int boot_socket(int d, int t, int p) { return static_cast<int>(syscall(SYS_socket, d, t, p)); }
int boot_socketpair(int d, int t, int p, int* sv) {
  return static_cast<int>(syscall(SYS_socketpair, d, t, p, sv));
}
int boot_accept4(int fd, sockaddr* a, socklen_t* n, int f) {
  return static_cast<int>(syscall(SYS_accept4, fd, a, n, f));
}
int boot_accept(int fd, sockaddr* a, socklen_t* n) { return boot_accept4(fd, a, n, 0); }
int boot_connect(int fd, const sockaddr* a, socklen_t n) {
  return static_cast<int>(syscall(SYS_connect, fd, a, n));
}
int boot_bind(int fd, const sockaddr* a, socklen_t n) {
  return static_cast<int>(syscall(SYS_bind, fd, a, n));
}
int boot_listen(int fd, int b) { return static_cast<int>(syscall(SYS_listen, fd, b)); }
ssize_t boot_sendto(int fd, const void* b, size_t n, int f, const sockaddr* a, socklen_t l) {
  return syscall(SYS_sendto, fd, b, n, f, a, l);
}
ssize_t boot_recvfrom(int fd, void* b, size_t n, int f, sockaddr* a, socklen_t* l) {
  return syscall(SYS_recvfrom, fd, b, n, f, a, l);
}
ssize_t boot_send(int fd, const void* b, size_t n, int f) { return boot_sendto(fd, b, n, f, nullptr, 0); }
ssize_t boot_recv(int fd, void* b, size_t n, int f) { return boot_recvfrom(fd, b, n, f, nullptr, nullptr); }
ssize_t boot_sendmsg(int fd, const msghdr* m, int f) { return syscall(SYS_sendmsg, fd, m, f); }
ssize_t boot_recvmsg(int fd, msghdr* m, int f) { return syscall(SYS_recvmsg, fd, m, f); }
int boot_shutdown(int fd, int how) { return static_cast<int>(syscall(SYS_shutdown, fd, how)); }

struct real_socket_functions {
  int (*socket)(int, int, int) = boot_socket;
  int (*socketpair)(int, int, int, int*) = boot_socketpair;
  int (*accept)(int, sockaddr*, socklen_t*) = boot_accept;
  int (*accept4)(int, sockaddr*, socklen_t*, int) = boot_accept4;
  int (*connect)(int, const sockaddr*, socklen_t) = boot_connect;
  int (*bind)(int, const sockaddr*, socklen_t) = boot_bind;
  int (*listen)(int, int) = boot_listen;
  ssize_t (*send)(int, const void*, size_t, int) = boot_send;
  ssize_t (*recv)(int, void*, size_t, int) = boot_recv;
  ssize_t (*sendto)(int, const void*, size_t, int, const sockaddr*, socklen_t) = boot_sendto;
  ssize_t (*recvfrom)(int, void*, size_t, int, sockaddr*, socklen_t*) = boot_recvfrom;
  ssize_t (*sendmsg)(int, const msghdr*, int) = boot_sendmsg;
  ssize_t (*recvmsg)(int, msghdr*, int) = boot_recvmsg;
  int (*shutdown)(int, int) = boot_shutdown;
};
real_socket_functions real_sock;

template <class Fn>
void resolve(Fn& slot, const char* name) {
  if (void* p = dlsym(RTLD_NEXT, name)) slot = reinterpret_cast<Fn>(p);
}

struct errno_keeper {
  int saved;
  errno_keeper() : saved(errno) {}
  ~errno_keeper() { errno = saved; }
};

inline bool should_record() { return load_relaxed(g_hot.recording) && !tls.busy; }

// As preload.cpp: a thread's first event registers it with its name.
void ensure_thread() {
  if (tls_context != nullptr) return;
  char name[17] = {};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  register_thread_slot(0, name);
}

// The interposer's classes, registered on first use.
enum family_class { kTcp, kUdp, kUnix, kOther, kFamilyClasses };
constexpr const char* kFamilyNames[kFamilyClasses] = {"tcp", "udp", "unix", "other"};
std::atomic<pfs_key> g_family_keys[kFamilyClasses];

pfs_key class_of(int domain, int type) {
  type &= ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
  const family_class f = domain == AF_UNIX                                ? kUnix
                         : (domain != AF_INET && domain != AF_INET6)      ? kOther
                         : type == SOCK_STREAM                            ? kTcp
                         : (type == SOCK_DGRAM || type == SOCK_SEQPACKET) ? kUdp
                                                                          : kOther;
  pfs_key k = g_family_keys[f].load(std::memory_order_relaxed);
  if (k == 0) {
    k = pfs_register_socket("preload", kFamilyNames[f]);
    g_family_keys[f].store(k, std::memory_order_relaxed);
  }
  return k;
}

// IP and PORT of a socket found or made: its peer, else its own address.
void set_address_from_kernel(int fd) {
  sockaddr_storage a{};
  socklen_t n = sizeof(a);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &n) != 0) {
    n = sizeof(a);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) != 0) return;
  }
  pfs_set_socket_address(fd, &a, n);
}

// A new socket descriptor: its row (class from its family, or the given one).
void created(int fd, int domain, int type, pfs_key key) {
  if (fd < 0 || !should_record()) return;
  busy_scope busy;
  errno_keeper keep;
  ensure_thread();
  pfs_init_socket(key != 0 ? key : class_of(domain, type), fd, nullptr, 0);
}

// The first io on a descriptor of unknown origin: a socket gets its row, anything
// else is not looked at again until its number is reset.
[[gnu::noinline, gnu::cold]] void probe(int fd) {
  busy_scope busy;
  errno_keeper keep;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
    mark_untracked_fd(fd);
    return;
  }
  int domain = 0, type = 0;
  socklen_t n = sizeof(int);
  ::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &n);
  n = sizeof(int);
  ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &n);
  ensure_thread();
  if (pfs_init_socket(class_of(domain, type), fd, nullptr, 0) != 0) set_address_from_kernel(fd);
}

// A wait on a socket call, then what it says about the address.
template <class Call>
int control(int fd, int op, const void* caller, Call call) {
  return socket_io(fd, op, false, caller, call);
}

void after_address_change(int fd, int rc, const sockaddr* addr, socklen_t len, bool local) {
  if ((rc != 0 && !(rc == -1 && errno == EINPROGRESS)) || !load_relaxed(g_hot.recording) || tls.busy) return;
  busy_scope busy;
  errno_keeper keep;
  if (socket_of_fd(fd) == nullptr) return;
  if (local)
    set_address_from_kernel(fd);  // bind: the port the kernel chose for port 0
  else
    pfs_set_socket_address(fd, addr, len);
}

template <class Call>
int accept_common(int fd, sockaddr* addr, socklen_t* len, const void* caller, Call call) {
  const int c = socket_io(fd, PFS_SOCKET_CONNECT, false, caller, call);  // MySQL: accept is "connect"
  if (c < 0 || !should_record()) return c;
  busy_scope busy;
  errno_keeper keep;
  ensure_thread();
  pfs_key key = pfs_socket_class(fd);
  if (key == 0) {
    int domain = 0, type = 0;
    socklen_t n = sizeof(int);
    ::getsockopt(c, SOL_SOCKET, SO_DOMAIN, &domain, &n);
    n = sizeof(int);
    ::getsockopt(c, SOL_SOCKET, SO_TYPE, &type, &n);
    key = class_of(domain, type);
  }
  if (pfs_init_socket(key, c, nullptr, 0) == 0) return c;
  if (addr != nullptr && len != nullptr)
    pfs_set_socket_address(c, addr, *len);
  else
    set_address_from_kernel(c);
  return c;
}

}  // namespace

bool socket_wait_start(socket_wait& w, int fd, int op, const void* caller) {
  if (!should_record()) return false;
  std::uint32_t slot = socket_slot_of_fd(fd);
  if (slot == kUntrackedFd) [[likely]]
    return false;
  if (slot == 0) [[unlikely]] {
    probe(fd);
    if (socket_of_fd(fd) == nullptr) return false;
  }
  busy_scope busy;
  errno_keeper keep;
  ensure_thread();
  return pfs_start_socket_wait(&w.locker, fd, op, source_of(caller), 0) != 0;
}

void socket_wait_end(socket_wait& w, std::int64_t bytes) {
  busy_scope busy;
  errno_keeper keep;
  pfs_end_socket_wait(&w.locker, bytes);
}

void socket_fd_reset(int fd) {
  if (socket_slot_of_fd(fd) == 0) return;
  busy_scope busy;
  errno_keeper keep;
  pfs_destroy_socket(fd);
}

void resolve_socket_functions() {
  real_socket_functions r;
  resolve(r.socket, "socket");
  resolve(r.socketpair, "socketpair");
  resolve(r.accept, "accept");
  resolve(r.accept4, "accept4");
  resolve(r.connect, "connect");
  resolve(r.bind, "bind");
  resolve(r.listen, "listen");
  resolve(r.send, "send");
  resolve(r.recv, "recv");
  resolve(r.sendto, "sendto");
  resolve(r.recvfrom, "recvfrom");
  resolve(r.sendmsg, "sendmsg");
  resolve(r.recvmsg, "recvmsg");
  resolve(r.shutdown, "shutdown");
  real_sock = r;  // each pointer one aligned word, as preload.cpp's table
}

}  // namespace pfs::preload

// ---------------------------------------------------------------------------
// The interposed socket functions.

using namespace pfs::preload;

#define PFS_EXPORT extern "C" __attribute__((visibility("default")))
#define CALLER __builtin_return_address(0)

PFS_EXPORT int socket(int domain, int type, int protocol) noexcept {
  const int fd = real_sock.socket(domain, type, protocol);
  created(fd, domain, type, 0);
  return fd;
}
PFS_EXPORT int socketpair(int domain, int type, int protocol, int sv[2]) noexcept {
  const int rc = real_sock.socketpair(domain, type, protocol, sv);
  if (rc == 0) {
    created(sv[0], domain, type, 0);
    created(sv[1], domain, type, 0);
  }
  return rc;
}
PFS_EXPORT int accept(int fd, sockaddr* addr, socklen_t* len) {
  return accept_common(fd, addr, len, CALLER, [=] { return real_sock.accept(fd, addr, len); });
}
PFS_EXPORT int accept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
  return accept_common(fd, addr, len, CALLER, [=] { return real_sock.accept4(fd, addr, len, flags); });
}
PFS_EXPORT int connect(int fd, const sockaddr* addr, socklen_t len) {
  const int rc = control(fd, PFS_SOCKET_CONNECT, CALLER, [=] { return real_sock.connect(fd, addr, len); });
  after_address_change(fd, rc, addr, len, false);
  return rc;
}
PFS_EXPORT int bind(int fd, const sockaddr* addr, socklen_t len) noexcept {
  const int rc = control(fd, PFS_SOCKET_BIND, CALLER, [=] { return real_sock.bind(fd, addr, len); });
  after_address_change(fd, rc, addr, len, true);
  return rc;
}
PFS_EXPORT int listen(int fd, int backlog) noexcept {
  return control(fd, PFS_SOCKET_OPT, CALLER, [=] { return real_sock.listen(fd, backlog); });
}
PFS_EXPORT ssize_t send(int fd, const void* buf, size_t n, int flags) {
  return socket_io(fd, PFS_SOCKET_SEND, true, CALLER, [=] { return real_sock.send(fd, buf, n, flags); });
}
PFS_EXPORT ssize_t recv(int fd, void* buf, size_t n, int flags) {
  return socket_io(fd, PFS_SOCKET_RECV, true, CALLER, [=] { return real_sock.recv(fd, buf, n, flags); });
}
PFS_EXPORT ssize_t sendto(int fd, const void* buf, size_t n, int flags, const sockaddr* to, socklen_t len) {
  return socket_io(fd, PFS_SOCKET_SENDTO, true, CALLER,
                   [=] { return real_sock.sendto(fd, buf, n, flags, to, len); });
}
PFS_EXPORT ssize_t recvfrom(int fd, void* buf, size_t n, int flags, sockaddr* from, socklen_t* len) {
  return socket_io(fd, PFS_SOCKET_RECVFROM, true, CALLER,
                   [=] { return real_sock.recvfrom(fd, buf, n, flags, from, len); });
}
// _FORTIFY_SOURCE forms: the same calls once the buffer size was checked.
PFS_EXPORT ssize_t __recv_chk(int fd, void* buf, size_t n, size_t buflen, int flags) {
  if (n > buflen) __builtin_trap();
  return socket_io(fd, PFS_SOCKET_RECV, true, CALLER, [=] { return real_sock.recv(fd, buf, n, flags); });
}
PFS_EXPORT ssize_t __recvfrom_chk(int fd, void* buf, size_t n, size_t buflen, int flags, sockaddr* from,
                                  socklen_t* len) {
  if (n > buflen) __builtin_trap();
  return socket_io(fd, PFS_SOCKET_RECVFROM, true, CALLER,
                   [=] { return real_sock.recvfrom(fd, buf, n, flags, from, len); });
}
PFS_EXPORT ssize_t sendmsg(int fd, const msghdr* m, int flags) {
  return socket_io(fd, PFS_SOCKET_SENDMSG, true, CALLER, [=] { return real_sock.sendmsg(fd, m, flags); });
}
PFS_EXPORT ssize_t recvmsg(int fd, msghdr* m, int flags) {
  return socket_io(fd, PFS_SOCKET_RECVMSG, true, CALLER, [=] { return real_sock.recvmsg(fd, m, flags); });
}
PFS_EXPORT int shutdown(int fd, int how) noexcept {
  return control(fd, PFS_SOCKET_SHUTDOWN, CALLER, [=] { return real_sock.shutdown(fd, how); });
}

// The LD_PRELOAD interposer (libpfs_preload.so): process-local state shared by
// its parts. Nothing here is in the region; everything is fixed-size, allocated
// with mmap at start-up (never with malloc on an event), and written lock-free or
// under a short spin lock that is never held across a call into the program, the
// C library's blocking functions or the dynamic loader.
//
// Parts:
//   preload.cpp        the interposed functions and start-up
//   preload_sites.cpp  call sites: caller address -> module, symbol, SOURCE text,
//                      instrument classes (resolved once, off the hot path, cached)
//   preload_map.cpp    object address -> sync_instance maps (mutex, rwlock, cond, sem)
//   preload_sem.cpp    POSIX semaphores (sem_wait, sem_post, sem_open...)
//   preload_socket.cpp socket calls, and socket detection of other descriptors
//   preload_memory.cpp the heap (malloc and friends), normal builds only
//   preload_mmap.cpp   anonymous memory maps (mmap, munmap, mremap), normal builds only
//   preload_exit.cpp   exit(): what exit handlers destroy and free is not booked
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/provider/event_path.h"
#include "agent/provider/pfs_c.h"

namespace pfs::preload {

using layout::sync_instance;

// Per-thread state. constinit + initial-exec: one %fs access, no TLS call, no
// allocation when a thread first touches it.
struct thread_state {
  // Set while the interposer (or the agent under it) runs on this thread: the
  // agent's own pthread and file calls, and calls from a signal handler that
  // interrupts it, go straight to the C library.
  bool busy;
  // The last lock call site of this thread (a loop hits it every time).
  const void* last_caller;
  const char* last_source;
  // The last mutex this thread acquired and its instance: its unlock (usually
  // the next call) needs no map lookup.
  const void* last_locked;
  sync_instance* last_locked_instance;
  // Set on the thread that calls exit() (preload_exit.cpp): what it destroys and
  // frees from then on, in the exit handlers, is not booked.
  bool exiting;
};
extern __attribute__((tls_model("initial-exec"))) constinit thread_local thread_state tls;

// This process's pid, set at start and in a forked child (not in a child of vfork).
extern std::atomic<pid_t> g_process_pid;
// The calling thread runs the program's exit handlers (preload_exit.cpp).
inline bool exiting() { return tls.exiting; }

// RAII for tls.busy; restores what it was (a wrapper that is already marked busy
// stays marked after a helper that uses this).
struct busy_scope {
  bool was;
  busy_scope() : was(tls.busy) { tls.busy = true; }
  ~busy_scope() { tls.busy = was; }
  busy_scope(const busy_scope&) = delete;
  busy_scope& operator=(const busy_scope&) = delete;
};

// memory/<program>/<name> (preload_memory.cpp), <program> the program's base name
// made a valid category; 0 when it cannot be registered. Call it marked busy.
pfs_key register_program_memory(const char* name);

enum sync_kind : int { kMutex = 0, kRwlock = 1, kCond = 2, kSem = 3, kSyncKinds = 4 };

// ---------------------------------------------------------------------------
// Call sites (preload_sites.cpp)

// Resolved once per caller address. source: "module:symbol+0xoff" (SOURCE);
// keys are registered lazily (0 = not yet, UINT32_MAX = registration failed).
struct call_site {
  std::atomic<std::uintptr_t> addr;                 // caller address; 0 = free
  std::atomic<std::uint32_t> state;                 // 0 free, 1 being written, 2 ready
  std::uint32_t module;                             // index in the module table + 1; 0 = unknown
  std::atomic<std::uint32_t> init_key[kSyncKinds];  // class of objects initialized here
  char source[layout::kSourceLen];
  char symbol[64];  // sanitized symbol name (or 0x<offset in module>) for class names
};

// The call site of a caller address, resolved and cached; nullptr when the site
// table is full (sources_lost is counted by the agent when SOURCE is missing).
call_site* site_of(const void* caller);
// SOURCE text of a caller (per-thread one-entry cache in front of site_of).
inline const char* source_of(const void* caller) {
  if (tls.last_caller == caller) [[likely]]
    return tls.last_source;
  call_site* s = site_of(caller);
  const char* text = s != nullptr ? s->source : nullptr;
  tls.last_caller = caller;
  tls.last_source = text;
  return text;
}
// Class of an object initialized (pthread_*_init) at caller: wait/synch/<kind>/<module>/<symbol>.
pfs_key init_class(const void* caller, sync_kind kind);
// Class of an object first seen when used (static initializer, or created before
// start-up): wait/synch/<kind>/<module>/static, module of the first user.
pfs_key static_class(const void* caller, sync_kind kind);
// File class of the module that calls open: wait/io/file/<module>/file.
pfs_key file_class(const void* caller);

// Name helpers (exposed for tests). Writes at most cap-1 characters and a NUL.
// Category alphabet [A-Za-z0-9_]; a module's file name loses its directory and
// its ".so..." suffix ("/lib/x86_64-linux-gnu/libc.so.6" -> "libc").
void sanitize_module(const char* path, char* out, std::size_t cap);
// Name alphabet [A-Za-z0-9_:.-]; anything else becomes '_'.
void sanitize_symbol(const char* symbol, char* out, std::size_t cap);
// The program's base name as a category ([A-Za-z0-9_], "program" if empty): the
// category of the classes a program names itself (sem_open names, its memory).
void program_category(char* out, std::size_t cap);

bool init_sites();  // maps the tables; false if mmap fails

// ---------------------------------------------------------------------------
// Object maps (preload_map.cpp)

// One table per kind: a slot holds a pointer to the instance (nullptr empty,
// kTombstone removed); the key is the instance's identity (the object's address),
// so a slot is one word and a lookup cannot see a torn key/value pair.
struct object_map {
  std::atomic<sync_instance*>* slots = nullptr;
  std::uint32_t mask = 0;
  std::uint32_t shift = 63;
  std::atomic<bool> lock{false};  // inserts and removals (rare)
  // Creating instances failed (instance array or table full): objects seen for
  // the first time stay uninstrumented, without a retry on every lock, until a
  // destroy makes room.
  std::atomic<bool> full{false};
  std::atomic<std::uint64_t> used{0};
  std::atomic<std::uint64_t> full_count{0};
};
extern object_map g_maps[kSyncKinds];
// A probe sequence is never longer than this: a miss costs at most this many
// loads, and an insert that finds no room in it counts as lost.
inline constexpr std::uint32_t kMaxProbe = 32;
inline sync_instance* const kTombstone = reinterpret_cast<sync_instance*>(std::uintptr_t{1});

inline std::uint32_t map_home(const object_map& m, std::uintptr_t addr) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(addr) * 0x9E3779B97F4A7C15ull) >> m.shift);
}
inline bool map_holds(const sync_instance* p, std::uintptr_t addr) {
  return p != nullptr && p != kTombstone && layout::load_relaxed(p->identity) == addr;
}

// Lock-free lookup (every lock call); nullptr if the object has no instance (yet).
inline sync_instance* find_instance(sync_kind kind, const void* object) {
  const object_map& m = g_maps[kind];
  const auto addr = reinterpret_cast<std::uintptr_t>(object);
  if (m.slots == nullptr) [[unlikely]]
    return nullptr;
  std::uint32_t i = map_home(m, addr);
  for (std::uint32_t probe = 0; probe < kMaxProbe; ++probe, i = (i + 1) & m.mask) {
    sync_instance* p = m.slots[i].load(std::memory_order_acquire);
    if (p == nullptr) return nullptr;
    if (map_holds(p, addr)) [[likely]]
      return p;
  }
  return nullptr;
}
// Instance of an object first seen when used: created with the static class of
// the caller's module. nullptr when it cannot be (arrays or map full: lost).
sync_instance* instance_on_first_use(sync_kind kind, const void* object, const void* caller);
// pthread_*_init: (re)creates the object's instance with the init site's class.
void instance_on_init(sync_kind kind, const void* object, const void* caller);
// sem_open: the object's instance in class key (a named semaphore's class), kept
// when it has one of that class already (the same name opened again).
void instance_with_class(sync_kind kind, const void* object, pfs_key key);
// pthread_*_destroy: releases the object's instance.
void instance_on_destroy(sync_kind kind, const void* object);

bool init_maps(std::uint32_t mutexes, std::uint32_t rwlocks, std::uint32_t conds, std::uint32_t sems);

// ---------------------------------------------------------------------------
// Sockets (preload_socket.cpp)

// A socket wait in progress on the caller's stack.
struct socket_wait {
  pfs_wait_locker locker;
};
// Starts a wait on fd when it is a recorded socket. A descriptor the interposer
// has not seen made (inherited, or made by a call it does not wrap) is looked at
// once (fstat: S_ISSOCK) on its first io; after that, one load decides. Keeps errno.
bool socket_wait_start(socket_wait& w, int fd, int op, const void* caller);
void socket_wait_end(socket_wait& w, std::int64_t bytes);  // keeps errno
// A descriptor opened, duplicated or closed: what was known of its number goes.
void socket_fd_reset(int fd);
// Resolves the real socket functions (called by resolve_all).
void resolve_socket_functions();
// The same for semaphores (preload_sem.cpp).
void resolve_sem_functions();
// At start-up (preload_inherited.cpp): every regular file the program inherited open
// (stdout redirected to a file by the shell, a descriptor a parent left open) is
// bound to its file by name, so its io is recorded as if the program had opened it.
void bind_inherited_files();
// The same for stdio (preload_stdio.cpp) and vector and zero-copy io (preload_vector.cpp).
void resolve_stdio_functions();
void resolve_vector_functions();

// io on a socket descriptor: call() is the real call; bytes it moved when counts_bytes.
template <class Call>
auto socket_io(int fd, int op, bool counts_bytes, const void* caller, Call call) -> decltype(call()) {
  socket_wait w;
  if (!socket_wait_start(w, fd, op, caller)) return call();
  const auto r = call();
  socket_wait_end(w, counts_bytes && r >= 0 ? static_cast<std::int64_t>(r) : -1);
  return r;
}

// ---------------------------------------------------------------------------
// Start-up (preload.cpp; used by preload_start.cpp)
bool resolve_real_functions();
// The real pthread_create for the agent's own thread (nullptr: call pthread_create).
using real_thread_create_fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
real_thread_create_fn real_thread_create();
// Around fork (preload_start.cpp): the object maps' locks taken before it and
// released after it in parent and child (the child's maps are then whole).
void lock_maps_for_fork(bool lock);
// The region file's descriptor (it holds the region's alive lock): a program that
// closes every descriptor it did not open must not close it. -1 = none.
extern int g_region_fd;

// Statistics of the maps (for tests and the report): entries in use, inserts
// that failed because the map was full.
struct map_stats {
  std::uint64_t used;
  std::uint64_t full;
};
map_stats stats_of(sync_kind kind);

}  // namespace pfs::preload

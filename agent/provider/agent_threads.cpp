// Thread records: registration on first use or by name, actors, exit.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <atomic>
#include <cstring>
#include <new>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/preload_api.h"
#include "agent/provider/internal/trace.h"
#include "agent/region/setup.h"
#include "agent/region/wide_sum.h"

namespace pfs::detail {
namespace {

// Threads without a slot (array full, agent stopped, region lost, forked child)
// use a context of their own whose record has no flags, so nothing is recorded for
// them; the event path still writes a few fields of a context (a lock's time, the
// nesting), so it is one per thread, not shared. Thread-local, not on the event
// path (which reads tls_context only), so the default TLS model: no static TLS
// taken from a library loaded with dlopen. Trivially destructible: nothing runs
// at thread exit.
struct no_slot {
  thread_record record;
  thread_context context;
};
constinit thread_local no_slot tls_no_slot{};

thread_context* no_slot_context() {
  no_slot& s = tls_no_slot;
  s.context.rec = &s.record;  // the address of a thread-local is not a constant
  return &s.context;
}

void release_current_thread();

#if defined(__SANITIZE_ADDRESS__)
// The calling thread's stack, [low, low + size); false if unknown.
bool current_stack(void** low, std::size_t* size) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
  const bool ok = pthread_attr_getstack(&attr, low, size) == 0;
  pthread_attr_destroy(&attr);
  return ok;
}
#endif

// Arms a destructor at thread exit; touched once at registration, never on the
// event path (a thread_local with a destructor costs a guard check per access).
struct thread_exit_hook {
  bool armed = false;
#if defined(__SANITIZE_ADDRESS__)
  void* stack_low = nullptr;
  std::size_t stack_size = 0;

  // Taken when armed, not at exit: pthread_getattr_np allocates, and a child
  // forked while another thread held AddressSanitizer's allocator lock (which
  // some versions of its runtime, GCC 12's among them, do not take across fork,
  // as glibc does its malloc's) would wait for it forever in exit().
  void arm() {
    if (!current_stack(&stack_low, &stack_size)) stack_low = nullptr;
    armed = true;
  }
#else
  void arm() { armed = true; }
#endif

  ~thread_exit_hook() {
    if (!armed) return;
#if defined(__SANITIZE_ADDRESS__)
    // A thread cancelled in a cancellation point (pthread_cancel) was unwound by
    // glibc's forced unwind, which AddressSanitizer does not see: the frames it
    // dropped leave their redzones poisoned below us, and the release's own frames
    // would land on them (a false stack-buffer-overflow). Nothing below this frame
    // is live at thread exit: the thread's stack below it is unpoisoned here.
    // (Not __asan_handle_no_return: its own sigaltstack call may land on them too.)
    char* frame = static_cast<char*>(__builtin_frame_address(0));
    char* low = static_cast<char*>(stack_low);
    if (low != nullptr && low < frame && frame <= low + stack_size)
      __asan_unpoison_memory_region(low, static_cast<std::size_t>(frame - low));
#endif
    release_current_thread();
  }
};
thread_local thread_exit_hook tls_exit_hook;

void release_batch(thread_context& t) {
  if (t.has_batch) store_release(g_agent->batches[t.batch].owner, std::uint64_t{0});
  t.has_batch = false;
}

void release_current_thread() {
  thread_context* t = tls_context;
  tls_context = no_slot_context();
  if (t == nullptr || t == tls_context || g_agent == nullptr) return;
  trace_close(t->trace);
  release_thread(*t);
}

}  // namespace

// Frees thread t's slot: its history_long batch, its units of work, its part of
// the global summary (into its classes' buckets), then the record.
void release_thread(thread_context& context) {
  thread_context* t = &context;
  complete_deferred(t);  // a thread that ends holding a lock
  release_batch(*t);
  thread_record& r = *t->rec;
  std::uint32_t word = load_relaxed(r.lock);
  store_relaxed(r.lock, (word & ~kStateMask) | kStateDirty);
  store_relaxed(r.derived, std::uint8_t{0});
  store_relaxed(r.work_derived, 0u);
  std::atomic_thread_fence(std::memory_order_release);
  leave_holders(*g_agent, *t, false);
  release_work(*g_agent, *t);
  release_memory(*g_agent, *t);
  release_errors(*g_agent, *t);
  release_meters(*g_agent, *t);
  // The thread's part of events_waits_summary_global_by_event_name moves to its
  // classes' buckets (its per-thread summaries leave with it, as in MySQL).
  for (std::uint32_t i = 0; t->global_stats != nullptr && i < g_agent->max_classes; ++i) {
    wait_stat& s = t->global_stats[i];
    if (load_relaxed(s.count) == 0) continue;
    aggregate_atomic(g_agent->classes[i].stat, load_wait_stat(s));
    zero_stat(s);
  }
  store_release(r.lock, ((word & ~kStateMask) + kVersionInc) | kStateFree);
}

thread_context* no_context() { return no_slot_context(); }
void arm_thread_exit_hook() { tls_exit_hook.arm(); }

void copy_field(char* dst, std::size_t cap, const char* src) {
  std::size_t n = src == nullptr ? 0 : std::strlen(src);
  if (n >= cap) n = cap - 1;
  for (std::size_t i = 0; i < cap; ++i) store_relaxed(dst[i], i < n ? src[i] : '\0');
}

__attribute__((tls_model("initial-exec"))) constinit thread_local thread_context* tls_context = nullptr;
// PARENT_THREAD_ID for this thread's record: the THREAD_ID of the thread that
// spawned it (pfs_set_thread_parent, set before the thread registers).
__attribute__((tls_model("initial-exec"))) constinit thread_local std::uint64_t tls_parent_thread_id = 0;

namespace {
struct spawn_args {
  void* (*start)(void*);
  void* arg;
  std::uint64_t parent;
};
}  // namespace

void* spawn_trampoline_arg(void* (*start)(void*), void* arg, std::uint64_t parent_thread_id) {
  return new (std::nothrow) spawn_args{start, arg, parent_thread_id};
}

void free_trampoline_arg(void* trampoline_arg) { delete static_cast<spawn_args*>(trampoline_arg); }

namespace {
constinit std::atomic<agent_busy_fn> g_agent_busy{nullptr};
}  // namespace

void set_agent_busy_hook(agent_busy_fn hook) { g_agent_busy.store(hook, std::memory_order_release); }

void mark_agent_busy(bool on) {
  if (const agent_busy_fn busy = g_agent_busy.load(std::memory_order_acquire)) busy(on);
}

void* spawn_trampoline(void* trampoline_arg) {
  const spawn_args a = *static_cast<spawn_args*>(trampoline_arg);
  const agent_busy_fn busy = g_agent_busy.load(std::memory_order_acquire);
  if (busy != nullptr) busy(true);
  free_trampoline_arg(trampoline_arg);
  if (busy != nullptr) busy(false);
  pfs_set_thread_parent(a.parent);
  return a.start(a.arg);
}

}  // namespace pfs::detail

namespace pfs {
using namespace detail;

void register_thread(const char* category, const char* name, const char* thread_name) {
  pfs_register_current_thread(pfs_register_thread(category, name), thread_name);
}
void set_thread_actor(const char* user, const char* host, const char* role) {
  pfs_set_thread_actor(user, host, role);
}
std::uint64_t thread_id() { return pfs_current_thread_id(); }
void unregister_thread() { pfs_unregister_current_thread(); }

}  // namespace pfs

using namespace pfs::detail;

extern "C" {

// A thread inside a wait (or an idle_wait scope) keeps its record: releasing it
// would leave the wait's locker pointing at a context that is reset.
static bool inside_wait() {
  thread_context* t = tls_context;
  if (t == nullptr || t->depth == 0) return false;
  bump_lost(kWorkCallErrors);
  return true;
}

void pfs_register_current_thread(pfs_key thread_class, const char* name) {
  if (g_agent == nullptr) pfs_init_from_env();
  if (g_agent == nullptr || inside_wait()) return;
  if (tls_context != nullptr) release_current_thread();
  register_thread_slot(thread_class, name);
}

void pfs_set_thread_actor(const char* user, const char* host, const char* role) {
  thread_context* t = current_thread();
  agent_state* a = g_agent;
  if (a == nullptr || t->thread_id == 0) return;
  thread_record& r = *t->rec;
  role = role != nullptr ? role : "%";
  // A new account: what the thread did so far stays with the one it leaves.
  const std::string_view was_user(r.user, strnlen(r.user, kUserLen)),
      was_host(r.host, strnlen(r.host, kHostLen));
  if (was_user != (user != nullptr ? std::string_view(user).substr(0, kUserLen - 1) : std::string_view{}) ||
      was_host != (host != nullptr ? std::string_view(host).substr(0, kHostLen - 1) : std::string_view{})) {
    leave_holders(*a, *t, true);
    join_holders(*a, *t, user, host);
  }
  copy_field(r.user, kUserLen, user);
  copy_field(r.host, kHostLen, host);
  copy_field(r.role, kUserLen, role);
  const pfs::setup::actor_match m =
      pfs::setup::match_actor(a->region, user != nullptr ? user : "", host != nullptr ? host : "", role);
  store_relaxed(r.foreground, std::uint8_t{1});
  store_relaxed(r.instrumented, static_cast<std::uint8_t>(m.found && m.enabled));
  store_relaxed(r.history, static_cast<std::uint8_t>(m.found && m.history));
  store_relaxed(r.derived, pfs::setup::thread_derived(a->region, r));
  store_relaxed(r.work_derived, pfs::setup::work_derived(a->region, r));
}

uint64_t pfs_current_thread_id(void) {
  if (g_agent == nullptr || !agent_running()) return 0;
  return current_thread()->thread_id;
}

int pfs_spawn_thread(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  void* a = spawn_trampoline_arg(start, arg, pfs_current_thread_id());
  if (a == nullptr) return pthread_create(thread, attr, start, arg);  // no parent then
  const int rc = pthread_create(thread, attr, spawn_trampoline, a);
  if (rc != 0) free_trampoline_arg(a);
  return rc;
}

void pfs_set_thread_parent(uint64_t parent_thread_id) {
  tls_parent_thread_id = parent_thread_id;
  // Already registered: its record shows the parent from now on.
  thread_context* t = tls_context;
  if (t != nullptr && t->rec != nullptr && t->thread_id != 0)
    store_relaxed(t->rec->parent_thread_id, parent_thread_id);
}

void pfs_unregister_current_thread(void) {
  if (g_agent != nullptr && inside_wait()) return;
  release_current_thread();
  tls_context = nullptr;  // a later event registers the thread again
}

}  // extern "C"

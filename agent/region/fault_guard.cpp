#include "agent/region/fault_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>

namespace pfs::fault_guard {
namespace {

constexpr int kSlots = kMaxMappings;

enum slot_state : int { kFree = 0, kClaimed, kActive };
enum lost_state : int { kMapped = 0, kReplacing, kReplaced, kReplaceFailed };

// Everything the handler reads is a lock-free atomic (async-signal-safe).
struct watched {
  std::atomic<int> state{kFree};
  std::atomic<std::uintptr_t> base{0};
  std::atomic<std::size_t> size{0};
  std::atomic<int> prot{0};
  std::atomic<int> lost{kMapped};
};

watched g_slots[kSlots];
// Where watch starts looking for a free slot: after the last one it claimed, so
// that claiming thousands one after another does not walk the claimed ones each time.
std::atomic<int> g_next_slot{0};
std::atomic<std::uint64_t> g_faults{0};

// Installation state, changed under g_install_mutex (never in the handler).
std::mutex g_install_mutex;
int g_scopes = 0;
bool g_permanent = false;
// The handler found when ours was installed; written only while ours is not
// installed, so the handler always reads a complete value.
struct sigaction g_previous {};

void on_sigbus(int sig, siginfo_t* info, void* context);

bool is_ours(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) != 0 && a.sa_sigaction == on_sigbus;
}

struct sigaction our_action() {
  struct sigaction ours {};
  ours.sa_sigaction = on_sigbus;
  ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&ours.sa_mask);
  return ours;
}

// For good (a provider, many threads): g_previous is written before ours is
// installed, so a handler running in another thread never reads it half-written.
// Two system calls.
void install_ordered_locked() {
  struct sigaction prev {};
  if (sigaction(SIGBUS, nullptr, &prev) != 0 || is_ours(prev)) return;
  g_previous = prev;
  const struct sigaction ours = our_action();
  sigaction(SIGBUS, &ours, nullptr);
}

// For a scope (a reader; a PostgreSQL backend is single-threaded and takes one per
// transaction): ours in, the previous out, in one system call. A SIGBUS can reach
// the handler before g_previous is written only from another thread, whose fault
// outside a region mapping would then take the default action.
void install_swapped_locked() {
  const struct sigaction ours = our_action();
  struct sigaction prev {};
  if (sigaction(SIGBUS, &ours, &prev) != 0) return;
  if (!is_ours(prev)) g_previous = prev;
}

// The previous handler back in one system call, or two when someone replaced ours
// meanwhile: they keep theirs.
void uninstall_locked() {
  struct sigaction cur {};
  if (sigaction(SIGBUS, &g_previous, &cur) != 0) return;
  if (!is_ours(cur)) sigaction(SIGBUS, &cur, nullptr);
}

// What would have happened without us: the previous handler, or the default action.
void chain(int sig, siginfo_t* info, void* context) {
  const struct sigaction& prev = g_previous;
  if ((prev.sa_flags & SA_SIGINFO) != 0) {
    if (prev.sa_sigaction != nullptr) prev.sa_sigaction(sig, info, context);
    return;
  }
  if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  // Default action (the kernel also forces it for an ignored fault): restore it and
  // raise the signal again; it stays pending until this handler returns.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);
}

// Replaces the whole mapping of slot s by anonymous zeros, once; a thread that
// faults while another replaces it returns and retries the access.
bool replace_with_zeros(watched& s) {
  int expected = kMapped;
  if (!s.lost.compare_exchange_strong(expected, kReplacing)) return expected != kReplaceFailed;
  void* base = reinterpret_cast<void*>(s.base.load(std::memory_order_relaxed));
  const std::size_t size = s.size.load(std::memory_order_relaxed);
  // The system call itself, not the C library's mmap: this runs in a signal
  // handler, where an interposed mmap (the LD_PRELOAD interposer counts anonymous
  // maps) must not run.
  auto* p = reinterpret_cast<void*>(syscall(SYS_mmap, base, size, s.prot.load(std::memory_order_relaxed),
                                            MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  if (p == MAP_FAILED) {
    s.lost.store(kReplaceFailed);
    return false;
  }
  g_faults.fetch_add(1, std::memory_order_relaxed);
  s.lost.store(kReplaced, std::memory_order_release);
  return true;
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  // Only faults raised by the kernel for an access carry a meaningful address.
  if (info != nullptr && info->si_code > 0) {
    const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
    for (watched& s : g_slots) {
      if (s.state.load(std::memory_order_acquire) != kActive) continue;
      const std::uintptr_t base = s.base.load(std::memory_order_relaxed);
      if (addr < base || addr - base >= s.size.load(std::memory_order_relaxed)) continue;
      if (replace_with_zeros(s)) {
        errno = saved_errno;
        return;
      }
      break;  // could not replace it: behave as without us
    }
  }
  chain(sig, info, context);
  errno = saved_errno;
}

}  // namespace

int watch(void* base, std::size_t size, int prot) noexcept {
  if (base == nullptr || size == 0) return -1;
  const int start = g_next_slot.load(std::memory_order_relaxed);
  for (int k = 0; k < kSlots; ++k) {
    const int i = (start + k) % kSlots;
    watched& s = g_slots[i];
    int expected = kFree;
    if (!s.state.compare_exchange_strong(expected, kClaimed)) continue;
    s.base.store(reinterpret_cast<std::uintptr_t>(base), std::memory_order_relaxed);
    s.size.store(size, std::memory_order_relaxed);
    s.prot.store(prot, std::memory_order_relaxed);
    s.lost.store(kMapped, std::memory_order_relaxed);
    s.state.store(kActive, std::memory_order_release);
    g_next_slot.store((i + 1) % kSlots, std::memory_order_relaxed);
    return i;
  }
  return -1;
}

void unwatch(int slot) noexcept {
  if (slot < 0 || slot >= kSlots) return;
  g_slots[slot].state.store(kFree, std::memory_order_release);
}

bool lost(int slot) noexcept {
  if (slot < 0 || slot >= kSlots) return false;
  return g_slots[slot].lost.load(std::memory_order_acquire) != kMapped;
}

void rearm(int slot) noexcept {
  if (slot < 0 || slot >= kSlots) return;
  g_slots[slot].lost.store(kMapped, std::memory_order_release);
}

std::uint64_t fault_count() noexcept { return g_faults.load(std::memory_order_relaxed); }

scope::scope() noexcept {
  std::lock_guard<std::mutex> g(g_install_mutex);
  if (g_scopes++ == 0 && !g_permanent) install_swapped_locked();
}

scope::~scope() {
  std::lock_guard<std::mutex> g(g_install_mutex);
  if (--g_scopes == 0 && !g_permanent) uninstall_locked();
}

void install_permanently() noexcept {
  std::lock_guard<std::mutex> g(g_install_mutex);
  g_permanent = true;
  install_ordered_locked();
}

}  // namespace pfs::fault_guard

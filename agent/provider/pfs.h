// The agent's C++ API: start-up, instrumented drop-in synchronization types, and
// thread registration. Everything here sits on the C ABI of pfs_c.h.
//
//   pfs::options o;                 // or just set PFS_REGION and friends
//   o.region_path = "/tmp/app.pfs";
//   o.instrument = "wait/synch/%=ON";
//   pfs::init(o);
//   pfs::mutex queue_lock{"app", "queue_lock"};  // wait/synch/mutex/app/queue_lock
//   { pfs::lock_guard g(queue_lock); ... }       // SOURCE = this file:line
//
// Objects built before the agent is initialized (and every object when it is not)
// run uninstrumented at the cost of one predictable branch per operation.
#pragma once

#ifdef PFS_NO_INSTRUMENTATION
#include "agent/provider/pfs_off.h"
#else

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "agent/provider/class_flags.h"
#include "agent/provider/event_path.h"
#include "agent/provider/pfs_c.h"
#include "agent/provider/pfs_work.h"
#include "agent/provider/source_location.h"
#include "agent/region/region.h"

namespace pfs {

// One --performance-schema-instrument style rule: pattern ('%' and '_' wildcards)
// and the value it gives matching classes. The longest matching pattern wins.
struct instrument_rule {
  std::string pattern;
  bool enabled = false;
  bool timed = false;
};

struct options {
  std::string region_path;  // PFS_REGION; empty = agent disabled
  region_sizes sizes;       // PFS_MAX_* and PFS_WAITS_* variables
  unsigned mode = 0660;     // PFS_REGION_MODE (octal)
  std::string group;        // PFS_REGION_GROUP: group of the file (e.g. postgres), so the server can read it
  std::string instrument;   // PFS_INSTRUMENT: "pattern=ON|OFF|COUNTED,..." ("%=ON" turns all on)
  std::string consumers;    // PFS_CONSUMERS: "events_waits_history=OFF,..." (all ON by default)
  std::string wait_timer;   // PFS_WAIT_TIMER: CYCLE, NANOSECOND, ... (default CYCLE if usable)
  bool remove_at_exit = false;  // PFS_REMOVE_REGION_AT_EXIT=1: unlink the file at shutdown
  std::string trace_dir;        // PFS_TRACE_DIR: trace files' directory (default: the region's)
  bool trace_all = false;       // PFS_TRACE_ALL=1: every enabled instrument starts TRACE_ENABLED
  // PFS_ALLOW_UNSAFE_DIR=1: create the region and trace files even in a directory
  // writable by other users without the sticky bit, or owned by another user
  // (docs/security.md). Symbolic links and planted files are refused regardless.
  bool allow_unsafe_dir = false;
  // PFS_TIMER_WATCH: auto (-1: check CYCLE's rate where the kernel clock source is not
  // tsc), off (0), on (1); PFS_TIMER_WATCH_INTERVAL_MS: between two checks (10..60000).
  int cycle_watch = -1;
  unsigned cycle_watch_interval_ms = 2000;
  // With %p in the path, regions of exited processes in the directory are removed by
  // the processes that make new ones there: PFS_REGION_KEEP ("10min", "2h", seconds)
  // those last changed longer ago, PFS_REGION_KEEP_COUNT the oldest beyond that
  // many (0: no limit).
  std::uint64_t region_keep_ns = 0;
  std::uint32_t region_keep_count = 1000;

  // Options from the PFS_* environment variables. Malformed values are reported
  // in *error and ignored.
  static options from_environment(std::string* error = nullptr);
};

// Parses "pattern=value,..." into rules; false (with a message) on a bad entry.
bool parse_instrument_rules(const std::string& text, std::vector<instrument_rule>& out, std::string& error);
// The rule that applies to a class name (longest matching pattern), or nullptr.
const instrument_rule* match_rule(const std::vector<instrument_rule>& rules, const std::string& name);
// MySQL LIKE-style matching: '%' any sequence, '_' one character.
bool like_match(const char* pattern, const char* text);

// Starts the agent: creates the region and registers the calling thread. Returns
// false (and the agent stays disabled; the program runs on) if it cannot; the
// reason is in last_error(). A second call fails if the agent is running.
bool init(const options& opts);
const std::string& last_error();
bool active();
// Stops recording, releases the region (removing it if asked). Objects that
// still exist keep working uninstrumented.
void shutdown();
// The mapped region of the running agent (nullptr when disabled): for the
// agent's own setup calls and for tests.
const region_map* current_region();

// Setup from inside the instrumented program (same effect as SQL UPDATEs).
bool set_instrument(const std::string& pattern, bool enabled, bool timed);  // LIKE pattern over names
// TRACE_ENABLED of the instruments matching pattern; false if one is not enabled.
bool set_instrument_trace(const std::string& pattern, bool trace);
// setup_actors TRACE_ENABLED of the row (host, user, role); false if there is none.
bool set_actor_trace(const std::string& host, const std::string& user, const std::string& role, bool trace);
bool set_consumer(const std::string& name, bool enabled);
bool set_wait_timer(const std::string& timer_name);
// Before a plugin's dlclose: its instances leave their tables (pfs_unload_plugin).
unsigned unload_plugin(const char* plugin_name);

// Threads
void register_thread(const char* category, const char* name, const char* thread_name = "");
void set_thread_actor(const char* user, const char* host, const char* role = "%");
std::uint64_t thread_id();
void unregister_thread();

namespace detail {
inline const volatile unsigned char kNoFlags = 0;
}

// Drop-in for std::mutex. lock()/try_lock() record a wait named
// wait/synch/mutex/<category>/<name>; SOURCE is the caller's file:line (use
// pfs::lock_guard / pfs::unique_lock to get the right line through a guard).
class mutex {
 public:
  mutex(const char* category, const char* name) : mutex(pfs_register_mutex(category, name)) {}
  explicit mutex(pfs_key key) : psi_(pfs_init_mutex(key, this)), flags_(pfs_class_flags(psi_ ? key : 0)) {}
  ~mutex() { pfs_destroy_sync(psi_); }
  mutex(const mutex&) = delete;
  mutex& operator=(const mutex&) = delete;

  [[gnu::always_inline]] void lock(pfs::source_location at = pfs::source_location::current()) {
    if (!detail::class_enabled(flags_)) [[likely]] {
      m_.lock();
      return;
    }
    // Not timed: the try first, and if nothing but counts is recorded, no locker.
    const bool untimed_taken = !detail::class_timed(flags_) && m_.try_lock();
    if (untimed_taken && detail::count_mutex_acquired(detail::as_instance(psi_))) return;
    detail::wait_locker l;
    if (!detail::begin_wait(l, detail::as_instance(psi_), PFS_OP_LOCK)) {
      if (!untimed_taken) m_.lock();
      return;
    }
    // Timed from before the first try, taken then or not (WL#2360).
    detail::start_timer(l);
    if (untimed_taken || m_.try_lock()) {
      detail::mutex_instant(l, true, at.file_name(), at.line(), true);
      return;
    }
    detail::start_contended(l, at.file_name(), at.line());
    m_.lock();
    detail::end_mutex_wait(l, 0);
  }
  bool try_lock(pfs::source_location at = pfs::source_location::current()) {
    if (!detail::class_enabled(flags_)) [[likely]]
      return m_.try_lock();
    detail::wait_locker l;
    const bool rec = detail::begin_wait(l, detail::as_instance(psi_), PFS_OP_TRY_LOCK);
    if (rec) detail::start_timer(l);
    const bool ok = m_.try_lock();
    if (rec) detail::mutex_instant(l, ok, at.file_name(), at.line(), true);
    return ok;
  }
  void unlock() {
    if (!detail::class_enabled(flags_)) [[likely]] {
      m_.unlock();
      return;
    }
    detail::unlock_mutex(detail::as_instance(psi_));
    m_.unlock();
    // The acquisition's own statistics, after the release (event_path.h).
    detail::complete_deferred(detail::tls_context);
  }
  std::mutex& native() { return m_; }
  pfs_sync* psi() const { return psi_; }

 private:
  std::mutex m_;
  pfs_sync* psi_;
  const volatile unsigned char* flags_;
};

// Drop-in for std::shared_mutex (a rwlock): wait/synch/rwlock/<category>/<name>.
class shared_mutex {
 public:
  shared_mutex(const char* category, const char* name) : shared_mutex(pfs_register_rwlock(category, name)) {}
  explicit shared_mutex(pfs_key key)
      : psi_(pfs_init_rwlock(key, this)), flags_(pfs_class_flags(psi_ ? key : 0)) {}
  ~shared_mutex() { pfs_destroy_sync(psi_); }
  shared_mutex(const shared_mutex&) = delete;
  shared_mutex& operator=(const shared_mutex&) = delete;

  void lock(pfs::source_location at = pfs::source_location::current()) {
    acquire(
        PFS_OP_WRITE_LOCK, at, [this] { return m_.try_lock(); }, [this] { m_.lock(); });
  }
  bool try_lock(pfs::source_location at = pfs::source_location::current()) {
    return try_acquire(PFS_OP_TRY_WRITE_LOCK, at, [this] { return m_.try_lock(); });
  }
  void unlock() {
    if (!detail::class_enabled(flags_)) [[likely]] {
      m_.unlock();
      return;
    }
    detail::unlock_rwlock(detail::as_instance(psi_));
    m_.unlock();
    detail::complete_deferred(detail::tls_context);
  }
  void lock_shared(pfs::source_location at = pfs::source_location::current()) {
    acquire(
        PFS_OP_READ_LOCK, at, [this] { return m_.try_lock_shared(); }, [this] { m_.lock_shared(); });
  }
  bool try_lock_shared(pfs::source_location at = pfs::source_location::current()) {
    return try_acquire(PFS_OP_TRY_READ_LOCK, at, [this] { return m_.try_lock_shared(); });
  }
  void unlock_shared() {
    if (!detail::class_enabled(flags_)) [[likely]] {
      m_.unlock_shared();
      return;
    }
    detail::unlock_rwlock(detail::as_instance(psi_));
    m_.unlock_shared();
    detail::complete_deferred(detail::tls_context);
  }

 private:
  // As pfs::mutex::lock: timed from before the first try.
  template <class Try, class Block>
  void acquire(int op, const pfs::source_location& at, Try&& try_real, Block&& block_real) {
    if (!detail::class_enabled(flags_)) [[likely]] {
      block_real();
      return;
    }
    detail::wait_locker l;
    if (!detail::begin_wait(l, detail::as_instance(psi_), op)) {
      block_real();
      return;
    }
    detail::start_timer(l);
    if (try_real()) {
      detail::rwlock_instant(l, true, at.file_name(), at.line(), true);
      return;
    }
    detail::start_contended(l, at.file_name(), at.line());
    block_real();
    detail::end_rwlock_wait(l, 0);
  }
  template <class Try>
  bool try_acquire(int op, const pfs::source_location& at, Try&& try_real) {
    if (!detail::class_enabled(flags_)) [[likely]]
      return try_real();
    detail::wait_locker l;
    const bool rec = detail::begin_wait(l, detail::as_instance(psi_), op);
    if (rec) detail::start_timer(l);
    const bool ok = try_real();
    if (rec) detail::rwlock_instant(l, ok, at.file_name(), at.line(), true);
    return ok;
  }
  std::shared_mutex m_;
  pfs_sync* psi_;
  const volatile unsigned char* flags_;
};

// Scoped guards that carry the caller's source line into the wait.
class lock_guard {
 public:
  explicit lock_guard(mutex& m, pfs::source_location at = pfs::source_location::current()) : m_(m) {
    m_.lock(at);
  }
  ~lock_guard() { m_.unlock(); }
  lock_guard(const lock_guard&) = delete;
  lock_guard& operator=(const lock_guard&) = delete;

 private:
  mutex& m_;
};

class unique_lock {
 public:
  explicit unique_lock(mutex& m, pfs::source_location at = pfs::source_location::current()) : m_(&m) {
    m_->lock(at);
    owns_ = true;
  }
  ~unique_lock() {
    if (owns_) m_->unlock();
  }
  unique_lock(const unique_lock&) = delete;
  unique_lock& operator=(const unique_lock&) = delete;
  void lock(pfs::source_location at = pfs::source_location::current()) {
    m_->lock(at);
    owns_ = true;
  }
  void unlock() {
    m_->unlock();
    owns_ = false;
  }
  bool owns_lock() const { return owns_; }
  mutex* get_mutex() const { return m_; }

 private:
  mutex* m_;
  bool owns_ = false;
};

// Drop-in for std::thread that records the creating thread as the new thread's
// parent (threads.PARENT_THREAD_ID, MySQL's PSI spawn_thread). The new thread
// registers as usual (register_thread, or on its first event).
class thread {
 public:
  using id = std::thread::id;
  using native_handle_type = std::thread::native_handle_type;

  thread() noexcept = default;
  template <class F, class... Args>
  requires(!std::is_same_v<std::remove_cvref_t<F>, thread>) explicit thread(F&& f, Args&&... args)
      : t_([parent = pfs_current_thread_id(), fn = std::forward<F>(f),
            ... a = std::forward<Args>(args)]() mutable {
          pfs_set_thread_parent(parent);
          std::invoke(std::move(fn), std::move(a)...);
        }) {}
  thread(thread&&) noexcept = default;
  thread& operator=(thread&&) noexcept = default;

  bool joinable() const noexcept { return t_.joinable(); }
  id get_id() const noexcept { return t_.get_id(); }
  native_handle_type native_handle() { return t_.native_handle(); }
  void join() { t_.join(); }
  void detach() { t_.detach(); }
  void swap(thread& other) noexcept { t_.swap(other.t_); }
  static unsigned hardware_concurrency() noexcept { return std::thread::hardware_concurrency(); }

 private:
  std::thread t_;
};

// Condition variable working with pfs::mutex: wait/synch/cond/<category>/<name>.
class condition_variable {
 public:
  condition_variable(const char* category, const char* name)
      : condition_variable(pfs_register_cond(category, name)) {}
  explicit condition_variable(pfs_key key)
      : psi_(pfs_init_cond(key, this)), flags_(pfs_class_flags(psi_ ? key : 0)) {}
  ~condition_variable() { pfs_destroy_sync(psi_); }
  condition_variable(const condition_variable&) = delete;
  condition_variable& operator=(const condition_variable&) = delete;

  void notify_one() noexcept {
    if (detail::class_enabled(flags_)) pfs_signal_cond(psi_);
    cv_.notify_one();
  }
  void notify_all() noexcept {
    if (detail::class_enabled(flags_)) pfs_broadcast_cond(psi_);
    cv_.notify_all();
  }

  void wait(unique_lock& lock, pfs::source_location at = pfs::source_location::current()) {
    instrumented(lock, PFS_OP_WAIT, at, [&](std::unique_lock<std::mutex>& native) {
      cv_.wait(native);
      return true;
    });
  }
  template <class Predicate>
  void wait(unique_lock& lock, Predicate pred, pfs::source_location at = pfs::source_location::current()) {
    while (!pred()) wait(lock, at);
  }
  template <class Clock, class Duration>
  std::cv_status wait_until(unique_lock& lock, const std::chrono::time_point<Clock, Duration>& t,
                            pfs::source_location at = pfs::source_location::current()) {
    std::cv_status status = std::cv_status::no_timeout;
    instrumented(lock, PFS_OP_TIMED_WAIT, at, [&](std::unique_lock<std::mutex>& native) {
      status = cv_.wait_until(native, t);
      return status == std::cv_status::no_timeout;
    });
    return status;
  }
  template <class Clock, class Duration, class Predicate>
  bool wait_until(unique_lock& lock, const std::chrono::time_point<Clock, Duration>& t, Predicate pred,
                  pfs::source_location at = pfs::source_location::current()) {
    while (!pred())
      if (wait_until(lock, t, at) == std::cv_status::timeout) return pred();
    return true;
  }
  template <class Rep, class Period>
  std::cv_status wait_for(unique_lock& lock, const std::chrono::duration<Rep, Period>& d,
                          pfs::source_location at = pfs::source_location::current()) {
    return wait_until(lock, std::chrono::steady_clock::now() + d, at);
  }
  template <class Rep, class Period, class Predicate>
  bool wait_for(unique_lock& lock, const std::chrono::duration<Rep, Period>& d, Predicate pred,
                pfs::source_location at = pfs::source_location::current()) {
    return wait_until(lock, std::chrono::steady_clock::now() + d, std::move(pred), at);
  }

 private:
  // Waits on the native mutex inside pfs::mutex (adopted, then released back to
  // the pfs::unique_lock), so the mutex's owner column stays right.
  template <class F>
  void instrumented(unique_lock& lock, int op, const pfs::source_location& at, F&& real) {
    mutex& m = *lock.get_mutex();
    std::unique_lock<std::mutex> native(m.native(), std::adopt_lock);
    if (!detail::class_enabled(flags_)) [[likely]] {
      real(native);
    } else {
      pfs_wait_locker l;
      int rec = pfs_start_cond_wait(&l, psi_, m.psi(), op, at.file_name(), at.line());
      bool ok = real(native);
      if (rec) pfs_end_cond_wait(&l, ok ? 0 : 1);
    }
    native.release();
  }
  std::condition_variable cv_;
  pfs_sync* psi_;
  const volatile unsigned char* flags_;
};

}  // namespace pfs

#endif  // PFS_NO_INSTRUMENTATION

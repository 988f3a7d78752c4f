// The C++ API with the agent compiled out (PFS_NO_INSTRUMENTATION; included by
// pfs.h): the instrumented types reduced to the plain std types (same
// constructors, same calls, nothing recorded, no agent to link), start-up that
// says the instrumentation is not there. pfs_io.h, pfs_work.h, pfs_error.h and
// pfs_meter.h (the program's metrics: updates then do nothing) need nothing
// more: they sit on the C ABI, whose functions then do nothing (pfs_c.h declares
// each once, with its value without the agent).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

#include "agent/provider/pfs_c.h"
#include "agent/provider/pfs_work.h"
#include "agent/provider/source_location.h"
#include "agent/region/region.h"  // region_sizes, region_map: types only

namespace pfs {

struct options {
  std::string region_path;
  region_sizes sizes;
  unsigned mode = 0660;
  std::string group;
  std::string instrument;
  std::string consumers;
  std::string wait_timer;
  bool remove_at_exit = false;
  std::string trace_dir;
  bool trace_all = false;
  bool allow_unsafe_dir = false;
  int cycle_watch = -1;
  unsigned cycle_watch_interval_ms = 2000;
  std::uint64_t region_keep_ns = 0;
  std::uint32_t region_keep_count = 1000;
  static options from_environment(std::string* error = nullptr) {
    (void)error;
    return {};
  }
};

inline bool init(const options&) { return false; }
inline const std::string& last_error() {
  static const std::string why = "instrumentation compiled out (PFS_NO_INSTRUMENTATION)";
  return why;
}
inline bool active() { return false; }
inline void shutdown() {}
inline const region_map* current_region() { return nullptr; }
inline bool set_instrument(const std::string&, bool, bool) { return false; }
inline bool set_instrument_trace(const std::string&, bool) { return false; }
inline bool set_actor_trace(const std::string&, const std::string&, const std::string&, bool) {
  return false;
}
inline bool set_consumer(const std::string&, bool) { return false; }
inline bool set_wait_timer(const std::string&) { return false; }
inline unsigned unload_plugin(const char*) { return 0; }
inline void register_thread(const char*, const char*, const char* = "") {}
inline void set_thread_actor(const char*, const char*, const char* = "%") {}
inline std::uint64_t thread_id() { return 0; }
inline void unregister_thread() {}

class mutex : public std::mutex {
 public:
  mutex(const char*, const char*) {}
  explicit mutex(pfs_key) {}
  void lock(pfs::source_location = pfs::source_location::current()) { std::mutex::lock(); }
  bool try_lock(pfs::source_location = pfs::source_location::current()) { return std::mutex::try_lock(); }
  std::mutex& native() { return *this; }
  pfs_sync* psi() const { return nullptr; }
};

class shared_mutex : public std::shared_mutex {
 public:
  shared_mutex(const char*, const char*) {}
  explicit shared_mutex(pfs_key) {}
  void lock(pfs::source_location = pfs::source_location::current()) { std::shared_mutex::lock(); }
  bool try_lock(pfs::source_location = pfs::source_location::current()) {
    return std::shared_mutex::try_lock();
  }
  void lock_shared(pfs::source_location = pfs::source_location::current()) {
    std::shared_mutex::lock_shared();
  }
  bool try_lock_shared(pfs::source_location = pfs::source_location::current()) {
    return std::shared_mutex::try_lock_shared();
  }
};

class lock_guard : public std::lock_guard<std::mutex> {
 public:
  explicit lock_guard(mutex& m, pfs::source_location = pfs::source_location::current())
      : std::lock_guard<std::mutex>(m) {}
};

class unique_lock : public std::unique_lock<std::mutex> {
 public:
  explicit unique_lock(pfs::mutex& m, pfs::source_location = pfs::source_location::current())
      : std::unique_lock<std::mutex>(m), m_(&m) {}
  void lock(pfs::source_location = pfs::source_location::current()) { std::unique_lock<std::mutex>::lock(); }
  pfs::mutex* get_mutex() const { return m_; }

 private:
  pfs::mutex* m_;
};

using thread = std::thread;

class condition_variable : public std::condition_variable {
 public:
  condition_variable(const char*, const char*) {}
  explicit condition_variable(pfs_key) {}
  void wait(unique_lock& l, pfs::source_location = pfs::source_location::current()) {
    std::condition_variable::wait(l);
  }
  template <class Predicate>
  void wait(unique_lock& l, Predicate pred, pfs::source_location = pfs::source_location::current()) {
    std::condition_variable::wait(l, std::move(pred));
  }
  template <class Clock, class Duration>
  std::cv_status wait_until(unique_lock& l, const std::chrono::time_point<Clock, Duration>& t,
                            pfs::source_location = pfs::source_location::current()) {
    return std::condition_variable::wait_until(l, t);
  }
  template <class Clock, class Duration, class Predicate>
  bool wait_until(unique_lock& l, const std::chrono::time_point<Clock, Duration>& t, Predicate pred,
                  pfs::source_location = pfs::source_location::current()) {
    return std::condition_variable::wait_until(l, t, std::move(pred));
  }
  template <class Rep, class Period>
  std::cv_status wait_for(unique_lock& l, const std::chrono::duration<Rep, Period>& d,
                          pfs::source_location = pfs::source_location::current()) {
    return std::condition_variable::wait_for(l, d);
  }
  template <class Rep, class Period, class Predicate>
  bool wait_for(unique_lock& l, const std::chrono::duration<Rep, Period>& d, Predicate pred,
                pfs::source_location = pfs::source_location::current()) {
    return std::condition_variable::wait_for(l, d, std::move(pred));
  }
};

}  // namespace pfs

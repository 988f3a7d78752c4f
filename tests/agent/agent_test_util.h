// Helpers for agent tests: every scenario runs in a forked child with a fresh agent
// (the agent is process-wide), and reads the region through its raw layout.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/region/region.h"
#include "agent/region/region_layout.h"

namespace pfs::test {

inline std::string temp_region_path(const char* tag) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/pfs_test_" + tag + "_" + std::to_string(getpid()) +
         ".region";
}

// Runs body in a child process; the child's gtest failures fail the parent's test.
template <class F>
void in_child(F body) {
  fflush(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    body();
    pfs::shutdown();  // removes the region of options with remove_at_exit
    fflush(nullptr);
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died with signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  ASSERT_EQ(WEXITSTATUS(status), 0) << "child reported failures (see above)";
}

// Small sizes so tests touch little memory; callers adjust what they test.
inline options small_options(const char* tag) {
  options o;
  o.region_path = temp_region_path(tag);
  o.sizes.max_classes = 32;
  o.sizes.max_threads = 8;
  o.sizes.history_per_thread = 4;
  o.sizes.history_long_size = 64;
  o.sizes.max_mutexes = 16;
  o.sizes.max_rwlocks = 16;
  o.sizes.max_conds = 16;
  o.sizes.setup_actors_size = 8;
  o.sizes.max_sources = 64;
  o.instrument = "%=ON";
  o.remove_at_exit = true;
  return o;
}

inline const layout::class_record* find_class(const region_map& r, const std::string& name) {
  auto* c = r.array<layout::class_record>(layout::kArrayClasses);
  for (std::uint64_t i = 0; i < r.count(layout::kArrayClasses); ++i)
    if ((c[i].lock & layout::kStateMask) == layout::kStateAllocated && name == c[i].name) return &c[i];
  return nullptr;
}

inline std::uint32_t class_index(const region_map& r, const std::string& name) {
  const auto* c = find_class(r, name);
  return c == nullptr
             ? 0
             : static_cast<std::uint32_t>(c - r.array<layout::class_record>(layout::kArrayClasses)) + 1;
}

inline const layout::sync_instance* find_instance(const region_map& r, layout::array_id id,
                                                  const void* identity) {
  auto* s = r.array<layout::sync_instance>(id);
  for (std::uint64_t i = 0; i < r.count(id); ++i)
    if ((s[i].lock & layout::kStateMask) == layout::kStateAllocated &&
        s[i].identity == reinterpret_cast<std::uintptr_t>(identity))
      return &s[i];
  return nullptr;
}

inline const layout::thread_record* find_thread(const region_map& r, std::uint64_t thread_id,
                                                std::uint32_t* slot) {
  auto* t = r.array<layout::thread_record>(layout::kArrayThreads);
  for (std::uint64_t i = 0; i < r.count(layout::kArrayThreads); ++i)
    if ((t[i].lock & layout::kStateMask) == layout::kStateAllocated && t[i].thread_id == thread_id) {
      if (slot != nullptr) *slot = static_cast<std::uint32_t>(i);
      return &t[i];
    }
  return nullptr;
}

// Completed events of a thread's history ring, oldest first.
inline std::vector<layout::wait_record> history_of(const region_map& r, std::uint64_t thread_id) {
  std::vector<layout::wait_record> out;
  std::uint32_t slot = 0;
  const auto* t = find_thread(r, thread_id, &slot);
  if (t == nullptr) return out;
  const std::uint32_t n = r.header().history_per_thread;
  const auto* h = r.array<layout::wait_record>(layout::kArrayWaitHistory) + std::uint64_t{slot} * n;
  const std::uint64_t next = t->history_index;
  for (std::uint64_t i = next > n ? next - n : 0; i < next; ++i) out.push_back(h[i % n]);
  return out;
}

inline std::vector<layout::wait_record> history_long(const region_map& r) {
  std::vector<layout::wait_record> out;
  auto* h = r.array<layout::wait_record>(layout::kArrayHistoryLong);
  for (std::uint64_t i = 0; i < r.count(layout::kArrayHistoryLong); ++i)
    if (h[i].state == layout::kWaitCompleted) out.push_back(h[i]);
  return out;
}

inline const layout::wait_record* stack_of(const region_map& r, std::uint64_t thread_id) {
  std::uint32_t slot = 0;
  if (find_thread(r, thread_id, &slot) == nullptr) return nullptr;
  return r.array<layout::wait_record>(layout::kArrayWaitStacks) +
         std::uint64_t{slot} * r.header().wait_stack_depth;
}

inline std::uint64_t lost(const region_map& r, layout::lost_id id) { return r.header().lost[id]; }

// A live thread's part of events_waits_summary_global_by_event_name for a class
// (1-based class index); nullptr when the thread has no slot.
inline const layout::wait_stat* global_stat_of(const region_map& r, std::uint64_t thread_id,
                                               std::uint32_t key) {
  std::uint32_t slot = 0;
  if (find_thread(r, thread_id, &slot) == nullptr || key == 0) return nullptr;
  return r.array<layout::wait_stat>(layout::kArrayThreadGlobalStats) +
         std::uint64_t{slot} * r.header().max_classes + key - 1;
}

}  // namespace pfs::test

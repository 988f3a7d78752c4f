// Process-local state of the provider: the mapped region, the per-thread contexts
// that point into it, and the locker state of a wait in progress.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "agent/pfs.h"
#include "agent/region.h"
#include "timers/timer.h"

namespace pfs::detail {

using namespace pfs::layout;

// One per thread slot of the region; only its thread writes it.
struct thread_context {
  thread_record* rec = nullptr;
  wait_record* stack = nullptr;        // wait_stack_depth slots
  wait_record* history = nullptr;      // history_per_thread slots
  wait_stat* class_stats = nullptr;    // max_classes entries
  std::uint64_t thread_id = 0;
  std::uint32_t slot = 0;
  std::uint32_t depth = 0;             // running waits
  std::uint64_t next_event_id = 1;
  std::uint64_t history_index = 0;
  // history_long batch this thread fills
  std::uint64_t batch = 0;             // batch number (index into batches)
  std::uint32_t batch_next = 0;        // next slot in history_long
  std::uint32_t batch_end = 0;         // one past the batch's last slot
  bool has_batch = false;
};

struct agent_state {
  region_map region;
  region_header* header = nullptr;
  class_record* classes = nullptr;
  std::uint32_t max_classes = 0;
  std::uint32_t stack_depth = 0;
  std::uint32_t history_size = 0;
  wait_record* history_long = nullptr;
  std::uint32_t history_long_size = 0;
  std::uint32_t history_long_batch = 0;
  batch_record* batches = nullptr;
  std::uint32_t batch_count = 0;
  source_record* sources = nullptr;
  std::uint32_t source_count = 0;
  timers::pico_converter converters[8] = {};
  std::vector<thread_context> contexts;  // one per thread slot, sized at init
  bool remove_at_exit = false;

  std::mutex registry_mutex;  // class registration, setup from the agent API (never on the event path)
  std::vector<instrument_rule> rules;
};

// The agent, or nullptr when disabled. Set once by init, before any instrumented
// object can see it, cleared at shutdown.
extern agent_state* g_agent;

// The current thread's context: registered on first use. Returns a context whose
// record is a process-local dummy with no flags when the thread cannot have one.
thread_context* current_thread();

// The C locker state (pfs_wait_locker) seen from C++.
struct wait_locker {
  thread_context* thread;
  sync_instance* instance;
  sync_instance* cond_mutex;  // cond waits: the mutex waited with
  std::uint8_t class_flags;   // class derived flags at start
  std::uint8_t thread_flags;  // thread derived flags at start
  std::uint8_t kind;          // instrument_kind
  std::uint8_t recorded;      // 1: the event holds a stack slot
  std::uint32_t pad;
  wait_record event;          // local copy of the event, published to the region
};

bool agent_running();
std::uint32_t intern_source(const char* file, unsigned line);
void bump_lost(lost_id id);
pfs_key register_class(instrument_kind kind, const char* category, const char* name);
sync_instance* create_instance(instrument_kind kind, pfs_key key, const void* identity);
void destroy_instance(sync_instance* s);
void atomic_min(std::uint64_t& field, std::uint64_t v);
void atomic_max(std::uint64_t& field, std::uint64_t v);
void aggregate_atomic(wait_stat& into, const wait_stat& from);

}  // namespace pfs::detail

// Process-local state of the provider: the mapped region, the per-thread contexts
// that point into it, and the locker state of a wait in progress.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/provider/event_path.h"
#include "agent/provider/internal/fork_locks.h"
#include "agent/provider/internal/preload_api.h"
#include "agent/provider/internal/region_retention.h"
#include "agent/provider/pfs.h"
#include "agent/region/cycle_epochs.h"
#include "agent/region/io_layout.h"
#include "agent/region/region.h"
#include "timers/timer.h"

namespace pfs::detail {

using namespace pfs::layout;

struct agent_state {
  region_map region;
  region_header* header = nullptr;
  class_record* classes = nullptr;
  std::uint32_t max_classes = 0;
  std::uint32_t max_accounts = 0, max_users = 0, max_hosts = 0;  // the holders' split (account_layout.h)
  std::uint32_t stack_depth = 0;
  std::uint32_t history_size = 0;
  wait_record* history_long = nullptr;
  std::uint32_t history_long_size = 0;
  std::uint32_t history_long_batch = 0;
  batch_record* batches = nullptr;
  std::uint32_t batch_count = 0;
  // The batch counter claim_batch takes turns from, on a cache line of its own.
  // The header's history_long_next_batch (readers' row estimate) counts only the
  // first lap: it shares a line with the setup that every timed wait reads, and a
  // write there per claim made two threads' waits miss it in turn.
  struct alignas(64) line_counter {
    std::uint64_t value = 0;
  } next_batch;
  source_record* sources = nullptr;
  std::uint32_t source_count = 0;
  // lock_contention_by_instance and the instances its keys index (agent_contention.cpp)
  contention_record* contention = nullptr;
  std::uint64_t contention_count = 0;
  const sync_instance* mutexes = nullptr;
  std::uint64_t mutex_count = 0;
  const sync_instance* rwlocks = nullptr;
  std::uint64_t rwlock_count = 0;
  // Allocated instances of each sync array (mutexes, rwlocks, conds, semaphores:
  // create_instance's window); a fork's child inherits its parent's counts with its
  // instances.
  std::atomic<std::uint64_t> live_sync_instances[4] = {};
  std::vector<thread_context> contexts;     // one per thread slot, sized at init
  std::vector<std::uint32_t> histogram_of;  // per thread slot and class: thread_context::wait_histogram_of
  // Per thread slot: its units of work in progress (thread_context::work). Allocated
  // at start-up, so that a thread's first event allocates nothing.
  std::unique_ptr<work_state[], void (*)(work_state*)> work_states{nullptr, nullptr};
  std::uint32_t stage_classes = 0;  // classes registered of each kind (their kind_index)
  std::uint32_t statement_classes = 0;
  std::uint32_t max_stage_classes = 0;  // copied from the header at start-up
  std::uint32_t max_statement_classes = 0;
  std::uint32_t memory_classes = 0;  // memory classes registered (their kind_index)
  std::uint32_t max_memory_classes = 0;
  pfs_key transaction_class = 0;  // atomic: set just after the agent is published
  pfs_key idle_class = 0;
  // PFS_REGION as given when it holds %p: a forked child records into its own
  // region, the pattern expanded with its pid (agent_fork.cpp); empty otherwise.
  std::string region_pattern;
  retention_policy retention;  // of the pattern's directory (region_retention.h)
  bool remove_at_exit = false;
  bool trace_all = false;
  // While the region is lost: the next try to map it back (CLOCK_MONOTONIC_COARSE
  // ns; tries are rate-limited, each reads the file's header), and whether the
  // loss was said.
  std::atomic<std::uint64_t> next_reattach_ns{0};
  bool loss_reported = false;  // under reattach_mutex
  // only ever try_lock'ed (fork prepare: lock), a leaf
  std::mutex& reattach_mutex = fork_locked().reattach;
  bool allow_unsafe_dir = false;  // PFS_ALLOW_UNSAFE_DIR: create files in directories others control

  // The mutexes live on fork_locks.h's page. Class registration, setup from the
  // agent API (never on the event path):
  std::mutex& registry_mutex = fork_locked().registry;
  // Claiming accounts, users and hosts (agent_accounts.cpp), a leaf:
  std::mutex& accounts_mutex = fork_locked().accounts;
  std::vector<instrument_rule> rules;
};

// The agent, or nullptr when disabled. Set once by init, before any instrumented
// object can see it, cleared at shutdown.
extern agent_state* g_agent;

// Picoseconds since the region's creation of an absolute raw value of a timer (not
// a duration): CYCLE values with the calibration epoch they were taken in.
inline std::uint64_t absolute_pico(std::uint8_t timer, std::uint64_t raw) {
  if (timer == static_cast<std::uint8_t>(timers::timer_kind::cycle))
    return cycle_to_pico(*g_hot.header, g_hot.converters[timer], raw);
  return g_hot.converters[timer].to_pico(raw);
}

// The CYCLE watch (agent_timer_watch.cpp): started by init when options ask for it,
// and again in a forked child that records into a region of its own.
void start_cycle_watch(region_header& h, unsigned interval_ms);
void restart_cycle_watch_in_child(region_header& h);
// pthread_create as the agent calls it for its own thread (set_thread_create_hook,
// preload_api.h); nullptr: pthread_create.
extern thread_create_fn g_thread_create;

bool agent_running();
// After a fault (the region file shrank under the mapping, fault_guard.h) the
// region is zeros and nothing is recorded. The slow paths (a class, instance or
// thread registered, a file or socket opened) call this first. True when the
// region may be written: it was never lost, or its file is this region again (an
// operator copied it back) and was mapped back, the fault counted in the status
// row region_faults. While it is lost they register nothing, so that nothing
// points into memory that the file replaces when it comes back; the loss is said
// once on stderr. One atomic load when nothing happened.
bool region_attached();
// Frees a thread's slot (its batch, units of work, global statistics, record).
void release_thread(thread_context& t);
// The context of threads that record nothing.
thread_context* no_context();
// Thread registration (register_thread_slot, cold_path.cpp): the thread's exit
// hook armed (agent_threads.cpp), a fixed-size field of its record copied, and
// PARENT_THREAD_ID for its record, set by pfs_set_thread_parent before it registers.
void arm_thread_exit_hook();
void copy_field(char* dst, std::size_t cap, const char* src);
extern __attribute__((tls_model("initial-exec"))) constinit thread_local std::uint64_t tls_parent_thread_id;
// The region path with %p replaced by pid, into out (cap bytes); false if it does
// not fit. No allocation: a fork child handler calls it.
bool expand_region_path(const char* pattern, long pid, char* out, std::size_t cap);
// Removes the regions of exited processes from the pattern's directory as
// a.retention says (region_retention.h); nothing without %p in the file name.
void sweep_pattern_directory(const agent_state& a);
// Around fork: the registries' mutexes taken before it, released after it in
// parent and child, so the child never inherits a registry in mid-change.
void lock_io_registries(bool lock);       // agent_io.cpp
void lock_socket_registry(bool lock);     // agent_socket.cpp
void lock_data_lock_registry(bool lock);  // agent_data_locks.cpp
// Fork handlers (agent_fork.cpp), installed by init.
void install_fork_handlers();
void aggregate_atomic(wait_stat& into, const wait_stat& from);
// File and socket io statistics: zeroed when an instance is made, folded into its
// class's bucket when it goes.
inline void reset_io(io_stat& s) {
  store_relaxed(s.count, std::uint64_t{0});
  zero_sum(s.sum, s.sum_hi);
  store_relaxed(s.min, UINT64_MAX);
  store_relaxed(s.max, std::uint64_t{0});
  store_relaxed(s.bytes, std::uint64_t{0});
}
inline void fold_io(io_stat& into, const io_stat& from) {
  const std::uint64_t count = load_relaxed(from.count);
  if (count == 0) return;
  __atomic_fetch_add(&into.count, count, __ATOMIC_RELAXED);
  add_wide_atomic(into.sum, into.sum_hi, load_sum(from));
  __atomic_fetch_add(&into.bytes, load_relaxed(from.bytes), __ATOMIC_RELAXED);
  atomic_min(into.min, load_relaxed(from.min));
  atomic_max(into.max, load_relaxed(from.max));
}
inline void zero_stat(wait_stat& s) {
  store_relaxed(s.count, std::uint64_t{0});
  zero_sum(s.sum, s.sum_hi);
  store_relaxed(s.min, UINT64_MAX);
  store_relaxed(s.max, std::uint64_t{0});
}
void init_io(agent_state& a, const region_sizes& sizes);
void init_sockets(agent_state& a, const region_sizes& sizes);  // agent_socket.cpp
// Units of work (agent_work.cpp): set up at init, and a thread's part at its
// registration and exit.
void init_work(agent_state& a);
// Registers 'transaction' and 'idle' (once the agent is published).
void register_work_classes(agent_state& a);
void attach_work(agent_state& a, thread_context& t);
void release_work(agent_state& a, thread_context& t);
// Memory (agent_memory.cpp): set up at init (with the agent's own
// memory/performance_schema/* classes once it is published), a thread's rows at its
// registration and exit.
void init_memory(agent_state& a);
// Errors (agent_errors.cpp): the arrays at init, the 'error' class once the agent
// is published, a thread's rows zeroed when it takes its slot and folded into the
// global part when it leaves.
void init_errors(agent_state& a);
void register_error_class(agent_state& a);
void attach_errors(agent_state& a, thread_context& t);
void release_errors(agent_state& a, thread_context& t);
// The program's metrics (agent_meters.cpp): the arrays at init, a thread's cells
// zeroed when it takes its slot and folded into the metrics' records when it leaves.
void init_meters(agent_state& a);
void attach_meters(agent_state& a, thread_context& t);
void release_meters(agent_state& a, thread_context& t);
// A statement's MYSQL_ERRNO counted as a raised error (statement_set_error).
void count_statement_error(unsigned mysql_errno);
// TLS channels (agent_tls.cpp): the records at init.
void init_tls(agent_state& a);
// Data locks (agent_data_locks.cpp): the free records of data_locks and
// data_lock_waits, at init.
void init_data_locks(agent_state& a);
// Metadata locks (agent_metadata.cpp): the array at init, wait/lock/metadata/sql/mdl
// once the agent is published.
void init_metadata(agent_state& a);
void register_metadata_class(agent_state& a);
void register_memory_classes(agent_state& a);
void attach_memory(agent_state& a, thread_context& t);
void release_memory(agent_state& a, thread_context& t);
// A statement of the thread started at stack level (1-based); at its end, the
// thread's most controlled and total memory while it ran (its MAX_*_MEMORY).
void statement_memory_begin(const thread_context& t, std::uint32_t level);
void statement_memory_end(const thread_context& t, std::uint32_t level, std::int64_t& max_controlled,
                          std::int64_t& max_total);
// Accounts, users and hosts (agent_accounts.cpp): a thread joins the holders of
// (user, host) (nullptr or empty: NULL) and leaves them, its statistics moved into
// its account (moving: it changes actor and lives on) or folded (it ends).
// rows_are_zero: every free holder's rows are zeros already (a forked child's are
// holes), so a holder claimed is not cleared (clearing would write, and so
// allocate, every page of its rows in the child's sparse file).
void join_holders(agent_state& a, thread_context& t, const char* user, const char* host,
                  bool rows_are_zero = false);
void leave_holders(agent_state& a, thread_context& t, bool moving);
// Plugin unload (agent_plugins.cpp): the instances whose class is one of the
// plugin's (plugin_class[class index - 1]) leave their tables, their statistics
// folded as each family's own destroy folds them. Each returns how many went.
std::uint32_t unload_files(const std::vector<bool>& plugin_class);    // agent_io.cpp
std::uint32_t unload_tables(const std::vector<bool>& plugin_class);   // agent_io.cpp
std::uint32_t unload_sockets(const std::vector<bool>& plugin_class);  // agent_socket.cpp
// "wait/synch/mutex/" for kKindMutex...: the part of a class name before its category.
const char* class_prefix(instrument_kind kind);

}  // namespace pfs::detail

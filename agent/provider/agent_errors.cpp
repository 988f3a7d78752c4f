// Error instrumentation (MySQL 8.0's psi_error.h: log_error). The program declares
// its errors in the region (kArrayErrors); a report finds the error's row index
// through a process-local table of numbers (open addressing, published with
// release stores, never shrunk) and counts it in the calling thread's row with
// relaxed loads and stores (its only writer). What has no thread row (threads
// without a slot) goes to the global part with atomic operations, and so do a
// thread's rows when it exits (MySQL aggregates them into the thread's account,
// user and host, or the global statistics).
//
// FIRST_SEEN and LAST_SEEN are seconds (MySQL's TIMESTAMP(0)), from time(), which
// the vDSO answers without a system call or a timer read.
#include <time.h>

#include <cstring>
#include <new>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/pfs_c.h"
#include "agent/region/error_layout.h"
#include "agent/region/setup.h"

namespace pfs::detail {
namespace {

// number -> row index (1-based; 0 = empty entry).
struct error_slot {
  std::int32_t number;
  std::uint32_t index;
};

struct error_state {
  error_record* records = nullptr;    // max_errors
  error_stat* thread_rows = nullptr;  // thread_count * per_thread
  error_stat* global_rows = nullptr;  // per_thread
  std::uint32_t max_errors = 0;
  std::uint32_t per_thread = 0;  // max_errors + 1 (row 0: the NULL row)
  std::uint32_t thread_count = 0;
  std::uint32_t declared = 0;                 // records used (under the registry mutex)
  error_slot* slots = nullptr;                // new[] at init, kept (a restarted agent makes new ones)
  std::uint32_t slot_mask = 0;                // slots - 1, a power of two
  const class_record* error_class = nullptr;  // 'error', set once the agent is published
};
constinit error_state g_errors;

std::uint32_t hash_of(std::int32_t number) {
  return static_cast<std::uint32_t>(
      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(number)) * 0x9E3779B97F4A7C15ull) >> 32);
}

// The row index of a declared error; 0 (the NULL row) otherwise.
std::uint32_t index_of(std::int32_t number) {
  const error_slot* slots = g_errors.slots;
  if (slots == nullptr) return 0;
  for (std::uint32_t i = hash_of(number), n = 0; n <= g_errors.slot_mask; ++i, ++n) {
    const error_slot& s = slots[i & g_errors.slot_mask];
    const std::uint32_t index = load_acquire(s.index);
    if (index == 0) return 0;
    if (load_relaxed(s.number) == number) return index;
  }
  return 0;
}

void count_in_thread_row(error_stat& s, int operation, std::uint64_t now) {
  if (operation == PFS_ERROR_HANDLED) {
    store_relaxed(s.handled, load_relaxed(s.handled) + 1);
    store_relaxed(s.raised, load_relaxed(s.raised) - 1);
  } else {
    store_relaxed(s.raised, load_relaxed(s.raised) + 1);
  }
  if (load_relaxed(s.first_seen) == 0) store_relaxed(s.first_seen, now);
  store_relaxed(s.last_seen, now);
}

void count_in_global_row(error_stat& s, int operation, std::uint64_t now) {
  error_stat one{};
  if (operation == PFS_ERROR_HANDLED) {
    one.raised = -1;
    one.handled = 1;
  } else {
    one.raised = 1;
  }
  one.first_seen = one.last_seen = now;
  setup::fold_error_stat(s, one);
}

void count(std::int32_t number, int operation) {
  // Acquire: the class is published after the rest of g_errors is set up.
  const class_record* c = __atomic_load_n(&g_errors.error_class, __ATOMIC_ACQUIRE);
  if (c == nullptr || !(load_relaxed(c->derived) & kFlagEnabled)) return;
  const std::uint32_t index = index_of(number);
  const auto now = static_cast<std::uint64_t>(time(nullptr));
  thread_context* t = current_thread();
  if (t != nullptr && t->thread_id != 0 && t->slot < g_errors.thread_count) [[likely]] {
    count_in_thread_row(g_errors.thread_rows[std::uint64_t{t->slot} * g_errors.per_thread + index], operation,
                        now);
    return;
  }
  count_in_global_row(g_errors.global_rows[index], operation, now);
}

}  // namespace

void init_errors(agent_state& a) {
  const region_header& h = a.region.header();
  delete[] g_errors.slots;
  g_errors = error_state{};
  g_errors.records = a.region.array<error_record>(kArrayErrors);
  g_errors.thread_rows = a.region.array<error_stat>(kArrayThreadErrorStats);
  g_errors.global_rows = a.region.array<error_stat>(kArrayClassErrorStats);
  if (g_errors.global_rows == nullptr) return;  // no error arrays: nothing is counted
  g_errors.max_errors = g_errors.records == nullptr ? 0 : h.max_errors;
  g_errors.per_thread = h.max_errors + 1;
  g_errors.thread_count = g_errors.thread_rows == nullptr ? 0 : h.max_threads;
  std::uint32_t size = 16;
  while (size < g_errors.max_errors * 2) size *= 2;
  g_errors.slots = new (std::nothrow) error_slot[size]();
  if (g_errors.slots == nullptr) {
    g_errors.max_errors = 0;  // reports all go to the NULL row
  } else {
    g_errors.slot_mask = size - 1;
  }
}

void register_error_class(agent_state& a) {
  const pfs_key key = register_named_class(kKindError, "error");
  if (key == 0 || g_errors.global_rows == nullptr) return;
  __atomic_store_n(&g_errors.error_class, &a.classes[key - 1], __ATOMIC_RELEASE);
}

void attach_errors(agent_state&, thread_context& t) {
  if (t.slot >= g_errors.thread_count) return;
  error_stat* rows = g_errors.thread_rows + std::uint64_t{t.slot} * g_errors.per_thread;
  for (std::uint32_t i = 0; i < g_errors.per_thread; ++i) {
    store_relaxed(rows[i].raised, std::int64_t{0});
    store_relaxed(rows[i].handled, std::uint64_t{0});
    store_relaxed(rows[i].first_seen, std::uint64_t{0});
    store_relaxed(rows[i].last_seen, std::uint64_t{0});
  }
}

void release_errors(agent_state&, thread_context& t) {
  if (t.slot >= g_errors.thread_count) return;
  const error_stat* rows = g_errors.thread_rows + std::uint64_t{t.slot} * g_errors.per_thread;
  for (std::uint32_t i = 0; i < g_errors.per_thread; ++i)
    setup::fold_error_stat(g_errors.global_rows[i], load_error_stat(rows[i]));
}

void count_statement_error(unsigned mysql_errno) {
  if (mysql_errno != 0) count(static_cast<std::int32_t>(mysql_errno), PFS_ERROR_RAISED);
}

}  // namespace pfs::detail

using namespace pfs::detail;

extern "C" {

int pfs_register_error(int number, const char* name, const char* sql_state) {
  if (g_agent == nullptr) pfs_init_from_env();  // as the other registrations: PFS_REGION starts it
  agent_state* a = g_agent;
  if (a == nullptr || g_errors.slots == nullptr || name == nullptr || *name == '\0' ||
      strnlen(name, kErrorNameLen) >= kErrorNameLen ||
      (sql_state != nullptr && strnlen(sql_state, kErrorSqlStateLen) > 5))
    return 0;
  std::lock_guard<std::mutex> guard(a->registry_mutex);
  if (index_of(number) != 0) return 1;
  if (g_errors.declared >= g_errors.max_errors) {
    bump_lost(kLostErrors);
    return 0;
  }
  const std::uint32_t index = ++g_errors.declared;  // row index; record index - 1
  error_record& r = g_errors.records[index - 1];
  store_relaxed(r.number, static_cast<std::int32_t>(number));
  copy_field(r.name, kErrorNameLen, name);  // lengths checked above
  copy_field(r.sql_state, kErrorSqlStateLen, sql_state);
  store_release(r.lock, kVersionInc | kStateAllocated);
  for (std::uint32_t i = hash_of(number);; ++i) {
    error_slot& s = g_errors.slots[i & g_errors.slot_mask];
    if (load_relaxed(s.index) != 0) continue;
    store_relaxed(s.number, static_cast<std::int32_t>(number));
    store_release(s.index, index);  // readers see the number once they see the index
    break;
  }
  return 1;
}

void pfs_log_error(int number, int operation) {
  if (operation != PFS_ERROR_RAISED && operation != PFS_ERROR_HANDLED) return;
  if (g_agent == nullptr) [[unlikely]]
    pfs_init_from_env();
  count(static_cast<std::int32_t>(number), operation);
}

}  // extern "C"

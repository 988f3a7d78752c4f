// Agent start-up and shutdown, instrument class registry, instances and sources.
// None of this is on the event path; it may take the registry mutex.
#include <grp.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/trace.h"
#include "agent/region/fault_guard.h"
#include "agent/region/setup.h"
#include "agent/region/wide_sum.h"

namespace pfs {
namespace detail {

constinit agent_state* g_agent = nullptr;
constinit hot_state g_hot;
namespace {

// Built on first use and never destroyed: pfs::init may run from an instrumented
// object's constructor before this file's initializers would have run, and a
// thread may ask for it after static destructors ran.
std::string& last_error_text() {
  static std::string* const text = new std::string;
  return *text;
}
constinit std::once_flag g_env_once;

constexpr const char* kKindPrefix[] = {"",
                                       "wait/synch/mutex/",
                                       "wait/synch/rwlock/",
                                       "wait/synch/cond/",
                                       "wait/io/file/",
                                       "wait/io/table/",
                                       "thread/",
                                       "stage/",
                                       "statement/",
                                       "",
                                       "",
                                       "wait/io/socket/",
                                       "memory/",
                                       "",
                                       "wait/lock/metadata/",
                                       "wait/lock/table/",
                                       "wait/synch/sem/"};
constexpr lost_id kClassesLost[] = {kLostMutexClasses,     kLostMutexClasses,     kLostRwlockClasses,
                                    kLostCondClasses,      kLostFileClasses,      kLostTableClasses,
                                    kLostThreadClasses,    kLostStageClasses,     kLostStatementClasses,
                                    kLostStatementClasses, kLostStatementClasses, kLostSocketClasses,
                                    kLostMemoryClasses,    kLostErrors,           kLostTableClasses,
                                    kLostTableClasses,     kLostSemClasses};
static_assert(std::size(kKindPrefix) == kKindSem + 1 && std::size(kClassesLost) == kKindSem + 1);
static_assert(PFS_OP_TRY_WAIT == kOpTryWait && PFS_OP_TIMED_WAIT == kOpTimedWait);

// A category is an identifier; a name may also hold "::", '.', '-' (MySQL has
// names like THR_LOCK::mutex), and a stage name spaces ("waiting for lock").
// No '/', '%' or control characters.
bool valid_part(const char* s, bool is_name, bool spaces = false) {
  if (s == nullptr || *s == '\0') return false;
  for (const char* p = s; *p != '\0'; ++p) {
    const char c = *p;
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    (is_name && (c == ':' || c == '.' || c == '-')) || (spaces && c == ' ');
    if (!ok) return false;
  }
  return true;
}

}  // namespace

const char* class_prefix(instrument_kind kind) { return kind <= kKindSem ? kKindPrefix[kind] : ""; }

bool agent_running() { return g_agent != nullptr && load_relaxed(g_hot.recording); }

void bump_lost(lost_id id) { __atomic_fetch_add(&g_agent->header->lost[id], 1, __ATOMIC_RELAXED); }

namespace {
std::uint64_t coarse_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}
constexpr std::uint64_t kReattachEveryNs = 100'000'000;  // 100 ms
}  // namespace

bool region_attached() {
  agent_state* a = g_agent;
  if (a == nullptr) return false;
  if (!a->region.lost()) [[likely]]
    return true;
  const std::uint64_t now = coarse_now_ns();
  if (now < a->next_reattach_ns.load(std::memory_order_relaxed)) return false;
  // Never waits: a thread that finds another one trying goes on unrecorded. Callers
  // may hold the registry or io mutexes.
  std::unique_lock<std::mutex> guard(a->reattach_mutex, std::try_to_lock);
  if (!guard.owns_lock()) return false;
  if (!a->region.lost()) return true;
  a->next_reattach_ns.store(now + kReattachEveryNs, std::memory_order_relaxed);
  if (a->region.remap_if_restored()) {
    __atomic_fetch_add(&a->header->lost[kRegionFaults], 1, __ATOMIC_RELAXED);
    a->loss_reported = false;
    return true;
  }
  if (!a->loss_reported) {
    a->loss_reported = true;
    report("region file \"" + a->region.path() +
           "\" was truncated or shrunk while the program had it mapped; nothing is recorded until "
           "the file is this region again");
  }
  return false;
}

pfs_key register_class(instrument_kind kind, const char* category, const char* name, std::uint8_t traits) {
  if (!valid_part(category, false) || !valid_part(name, true, kind == kKindStage)) return 0;
  return register_named_class(kind, std::string(kKindPrefix[kind]) + category + "/" + name, traits);
}

pfs_key register_named_class(instrument_kind kind, const std::string& full, std::uint8_t traits) {
  if (!region_attached()) return 0;
  agent_state* a = g_agent;
  if (full.size() >= kNameLen) return 0;
  std::lock_guard<std::mutex> guard(a->registry_mutex);
  for (std::uint32_t i = 0; i < a->max_classes; ++i) {
    class_record& c = a->classes[i];
    if ((load_acquire(c.lock) & kStateMask) != kStateAllocated) {
      // Classes are never freed, so the first free slot ends the search.
      // MySQL's defaults where no rule matches: statements, transactions, idle
      // and table io (wait/io/table/sql/handler YES YES, WL#4895) on and timed;
      // the other waits and stages off.
      // Memory classes and 'error' are on (MySQL 8.0's defaults) and never timed;
      // so are metadata and table lock waits, timed (wait/lock/metadata/sql/mdl and
      // wait/lock/table/sql/handler are YES YES in MySQL 8.0).
      bool enabled = kind == kKindStatement || kind == kKindTransaction || kind == kKindIdle ||
                     kind == kKindTable || kind == kKindMemory || kind == kKindError ||
                     kind == kKindMetadata || kind == kKindTableLock;
      bool timed = enabled && !never_timed(kind);
      if (const instrument_rule* r = match_rule(a->rules, full)) {
        enabled = r->enabled;
        timed = r->timed && !never_timed(kind);
      }
      // Stages and statements index their per-thread statistics by their rank
      // among the classes of their kind.
      std::uint32_t kind_index = 0;
      if (kind == kKindStage || kind == kKindStatement) {
        std::uint32_t& next = kind == kKindStage ? a->stage_classes : a->statement_classes;
        const std::uint32_t limit = kind == kKindStage ? a->max_stage_classes : a->max_statement_classes;
        if (next >= limit) break;
        kind_index = next++;
      } else if (kind == kKindMemory) {
        if (a->memory_classes >= a->max_memory_classes) break;
        kind_index = a->memory_classes++;
      }
      setup_lock_guard setup(a->region);
      store_relaxed(c.lock, kStateDirty);
      c.kind = kind;
      c.kind_index = kind_index;
      c.traits = traits;
      std::memcpy(c.name, full.c_str(), full.size() + 1);
      c.stat = wait_stat{0, 0, UINT64_MAX, 0, 0};
      const auto flags = static_cast<std::uint8_t>((enabled ? kFlagEnabled : 0) | (timed ? kFlagTimed : 0) |
                                                   (enabled && a->trace_all ? kFlagTraced : 0));
      store_relaxed(c.flags, flags);
      store_relaxed(c.derived, setup::class_derived(*a->header, flags));
      store_release(c.lock, kVersionInc | kStateAllocated);
      atomic_max(a->header->classes_used, i + 1);
      return i + 1;
    }
    if (c.kind == kind && std::strncmp(c.name, full.c_str(), kNameLen) == 0) return i + 1;
  }
  bump_lost(kClassesLost[kind]);
  return 0;
}

// The instance array of a sync kind.
array_id sync_array_of(std::uint32_t kind) {
  return kind == kKindMutex    ? kArrayMutexes
         : kind == kKindRwlock ? kArrayRwlocks
         : kind == kKindSem    ? kArraySems
                               : kArrayConds;
}
// The count of a sync kind's allocated instances (agent_state::live_sync_instances).
std::atomic<std::uint64_t>& live_sync_instances(agent_state& a, std::uint32_t kind) {
  return a.live_sync_instances[kind == kKindMutex ? 0 : kind == kKindRwlock ? 1 : kind == kKindSem ? 3 : 2];
}

void forget_sync_instance(agent_state& a, std::uint32_t kind) {
  std::atomic<std::uint64_t>& live = live_sync_instances(a, kind);
  // Never below zero (an instance freed by a path that did not count it).
  std::uint64_t n = live.load(std::memory_order_relaxed);
  while (n > 0 && !live.compare_exchange_weak(n, n - 1, std::memory_order_relaxed)) {
  }
}

sync_instance* create_instance(instrument_kind kind, pfs_key key, const void* identity) {
  if (!region_attached()) return nullptr;
  agent_state* a = g_agent;
  if (key == 0 || key > a->max_classes || a->classes[key - 1].kind != kind) return nullptr;
  const array_id id = sync_array_of(kind);
  const lost_id lost = kind == kKindMutex    ? kLostMutexInstances
                       : kind == kKindRwlock ? kLostRwlockInstances
                       : kind == kKindSem    ? kLostSemInstances
                                             : kLostCondInstances;
  auto* instances = a->region.array<sync_instance>(id);
  const std::uint64_t n = a->region.count(id);
  if (n == 0) {
    bump_lost(lost);
    return nullptr;
  }
  // Start at a hash of the address so concurrent creators spread out (MySQL's
  // randomized_index), then claim the first free slot with one CAS. The start falls
  // in a window about twice the instances alive: a program that makes and destroys
  // objects at ever new addresses (OpenSSL's locks) reuses the same few pages of the
  // array instead of writing all of them over time, which its every forked child's
  // region would copy. At least half the window is free, so the probe stays short.
  std::atomic<std::uint64_t>& live = live_sync_instances(*a, kind);
  const std::uint64_t window =
      std::min<std::uint64_t>(n, std::bit_ceil(2 * live.load(std::memory_order_relaxed) + 64));
  // The window's share of the hash's high bits (which every bit of the address
  // moves; the low bits of a product follow the low bits of the address only).
  const std::uint64_t hash =
      static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(identity) >> 4) * 0x9E3779B97F4A7C15ull;
  const std::uint64_t start = ((hash >> 32) * window) >> 32;  // window < 2^32: sizes are 32-bit
  for (std::uint64_t probe = 0; probe < n; ++probe) {
    sync_instance& s = instances[(start + probe) % n];
    std::uint32_t word = load_relaxed(s.lock);
    if ((word & kStateMask) != kStateFree) continue;
    if (!__atomic_compare_exchange_n(&s.lock, &word, (word & ~kStateMask) | kStateDirty, false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      continue;
    store_relaxed(s.class_index, key);
    store_relaxed(s.identity, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(identity)));
    store_relaxed(s.owner_thread_id, std::uint64_t{0});
    store_relaxed(s.owner_event_id, std::uint64_t{0});
    store_relaxed(s.owner_source, 0u);
    store_relaxed(s.readers, 0u);
    store_relaxed(s.stat.count, std::uint64_t{0});
    zero_sum(s.stat.sum, s.stat.sum_hi);
    store_relaxed(s.stat.min, UINT64_MAX);
    store_relaxed(s.stat.max, std::uint64_t{0});
    store_release(s.lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
    live.fetch_add(1, std::memory_order_relaxed);
    return &s;
  }
  bump_lost(lost);
  return nullptr;
}

// Folds one statistic into a bucket that several threads may update at once.
void aggregate_atomic(wait_stat& into, const wait_stat& from) {
  if (from.count == 0) return;
  __atomic_fetch_add(&into.count, from.count, __ATOMIC_RELAXED);
  add_wide_atomic(into.sum, into.sum_hi, make_wide(from.sum, from.sum_hi));
  atomic_min(into.min, from.min);
  atomic_max(into.max, from.max);
}

void destroy_instance(sync_instance* s) {
  agent_state* a = g_agent;
  if (a == nullptr || s == nullptr) return;
  // Allocated -> dirty with one CAS: of two destroyers (the program and a plugin's
  // unload) one frees the instance and counts it gone.
  std::uint32_t word = load_relaxed(s->lock);
  if ((word & kStateMask) != kStateAllocated ||
      !__atomic_compare_exchange_n(&s->lock, &word, (word & ~kStateMask) | kStateDirty, false,
                                   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return;
  const std::uint32_t key = load_relaxed(s->class_index);
  if (key != 0 && key <= a->max_classes) forget_sync_instance(*a, a->classes[key - 1].kind);
  // Nothing to fold: events_waits_summary_global_by_event_name keeps its own
  // statistics (the threads'), which counted this instance's waits already.
  store_release(s->lock, ((word & ~kStateMask) + kVersionInc) | kStateFree);
}

}  // namespace detail

using namespace detail;

namespace {

// A failed start: kept for pfs::last_error() and said once on stderr.
void fail(const std::string& message) {
  detail::last_error_text() = message;
  report("agent not started: " + message);
}

bool apply_consumers(agent_state& a, const std::string& text, std::string& error) {
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string entry = text.substr(pos, comma - pos);
    pos = comma + 1;
    if (entry.empty()) continue;
    std::size_t eq = entry.find('=');
    int id = setup::consumer_from_name(entry.substr(0, eq));
    std::string value = eq == std::string::npos ? "" : entry.substr(eq + 1);
    bool on = !strcasecmp(value.c_str(), "ON") || !strcasecmp(value.c_str(), "YES") || value == "1";
    bool off = !strcasecmp(value.c_str(), "OFF") || !strcasecmp(value.c_str(), "NO") || value == "0";
    if (id < 0 || (!on && !off)) {
      error = "consumer setting \"" + entry + "\" is not of the form <consumer>=ON|OFF";
      return false;
    }
    a.header->consumers[id] = on ? 1 : 0;
  }
  return true;
}

}  // namespace

bool init(const options& opts) {
  if (g_agent != nullptr) {
    fail("the agent is already initialized");
    return false;
  }
  if (opts.region_path.empty()) {
    fail("no region path: set PFS_REGION");
    return false;
  }
  auto a = std::make_unique<agent_state>();
  std::string error;
  if (!parse_instrument_rules(opts.instrument, a->rules, error)) {
    fail("PFS_INSTRUMENT: " + error);
    return false;
  }
  // %p in the path: the pid, here and again in each forked child (agent_fork.cpp).
  std::string region_path = opts.region_path;
  if (region_path.find("%p") != std::string::npos) {
    a->region_pattern = region_path;
    std::string expanded(region_path.size() + 32, '\0');
    if (!expand_region_path(region_path.c_str(), static_cast<long>(getpid()), expanded.data(),
                            expanded.size())) {
      fail("region path \"" + region_path + "\" is too long");
      return false;
    }
    region_path = expanded.c_str();
  }
  region_error err;
  // A region per process (%p): sparse, so that a forked child copies only the pages
  // written (fork_child_region.cpp) and each process holds on disk what it wrote.
  a->region = region_map::create(region_path, opts.sizes, opts.mode, err, opts.allow_unsafe_dir,
                                 !a->region_pattern.empty());
  if (err) {
    fail(err.message + (err.detail.empty() ? "" : ": " + err.detail));
    return false;
  }
  // Regions of exited processes that the pattern made in the directory: this
  // process makes a new one there, so it removes those kept too long.
  if (!a->region_pattern.empty()) {
    a->retention = {opts.region_keep_ns, opts.region_keep_count};
    sweep_pattern_directory(*a);
  }
  // The program must survive its region file being truncated by someone else.
  fault_guard::install_permanently();
  region_header& h = a->region.header();
  a->header = &h;
  store_relaxed(h.thread_slots_used, kThreadSlotsKnown);  // no slot claimed yet
  if (!opts.group.empty()) {
    const struct group* g = getgrnam(opts.group.c_str());
    if (g == nullptr || fchown(a->region.fd(), static_cast<uid_t>(-1), g->gr_gid) != 0) {
      const std::string why = g == nullptr ? "there is no such group" : std::strerror(errno);
      a->region.unlink_file();
      fail("PFS_REGION_GROUP: could not give region file \"" + region_path + "\" to group \"" + opts.group +
           "\": " + why);
      return false;
    }
  }
  if (!apply_consumers(*a, opts.consumers, error)) {
    a->region.unlink_file();
    fail("PFS_CONSUMERS: " + error);
    return false;
  }
  if (!opts.wait_timer.empty()) {
    timers::timer_kind k = timers::timer_from_name(opts.wait_timer);
    if (k == timers::timer_kind::none) {
      a->region.unlink_file();
      fail("PFS_WAIT_TIMER: unknown wait timer \"" + opts.wait_timer + "\"");
      return false;
    }
    if (h.timers[static_cast<int>(k)].available != 0) {
      h.wait_timer = static_cast<std::uint8_t>(k);
    } else {
      // Seed 001: a timer the machine cannot use is a warning; the default stays.
      const std::string_view fallback = timers::timer_name(static_cast<timers::timer_kind>(h.wait_timer));
      report("warning: wait timer " + opts.wait_timer + " is not available here (" +
             timers::info(k).unavailable_reason + "); waits use " + std::string(fallback));
    }
  }
  a->classes = a->region.array<class_record>(kArrayClasses);
  a->max_classes = h.max_classes;
  a->max_accounts = h.max_accounts;  // read once: the file may change under the mapping
  a->max_users = h.max_users;
  a->max_hosts = h.max_hosts;
  a->stack_depth = h.wait_stack_depth;
  a->history_size = h.history_per_thread;
  a->history_long = a->region.array<wait_record>(kArrayHistoryLong);
  a->history_long_size = h.history_long_size;
  a->history_long_batch = h.history_long_batch;
  a->batches = a->region.array<batch_record>(kArrayHistoryLongBatches);
  a->batch_count = static_cast<std::uint32_t>(a->region.count(kArrayHistoryLongBatches));
  a->sources = a->region.array<source_record>(kArraySources);
  a->source_count = static_cast<std::uint32_t>(a->region.count(kArraySources));
  a->contention = a->region.array<contention_record>(kArrayLockContention);
  a->contention_count = a->region.count(kArrayLockContention);
  a->mutexes = a->region.array<sync_instance>(kArrayMutexes);
  a->mutex_count = a->region.count(kArrayMutexes);
  a->rwlocks = a->region.array<sync_instance>(kArrayRwlocks);
  a->rwlock_count = a->region.count(kArrayRwlocks);
  a->contexts.resize(h.max_threads);
  g_hot.header = &h;
  g_hot.classes = a->classes;
  g_hot.class_count = a->max_classes;
  g_hot.stack_depth = a->stack_depth;
  g_hot.history_size = a->history_size;
  g_hot.history_long = a->history_long;
  g_hot.history_long_size = a->history_long_size;
  for (int k = 0; k < 8; ++k) g_hot.converters[k] = {h.timers[k].base, h.timers[k].mult, h.timers[k].shift};
  a->remove_at_exit = opts.remove_at_exit;
  a->trace_all = opts.trace_all;
  a->allow_unsafe_dir = opts.allow_unsafe_dir;
  if (!opts.trace_dir.empty()) {
    trace_dir() = opts.trace_dir;
  } else {
    const std::size_t slash = region_path.rfind('/');
    trace_dir() = slash == std::string::npos ? "." : slash == 0 ? "/" : region_path.substr(0, slash);
  }

  init_io(*a, opts.sizes);
  init_sockets(*a, opts.sizes);
  init_work(*a);
  init_memory(*a);
  init_errors(*a);
  init_meters(*a);
  init_tls(*a);
  init_data_locks(*a);
  init_metadata(*a);
  // MySQL's default setup_actors and setup_objects rows. PFS_TRACE_ALL=1 traces
  // from the first event (WL#4878: enabled means traced before the first user),
  // so the default actor row starts with TRACE_ENABLED YES too.
  setup::insert_actor(a->region, "%", "%", "%", true, true, a->trace_all);
  setup::insert_default_objects(a->region);
  setup::recompute_derived(a->region);

  __atomic_store_n(&g_agent, a.release(), __ATOMIC_RELEASE);
  static std::once_flag fork_handlers_once;
  std::call_once(fork_handlers_once, install_fork_handlers);
  register_work_classes(*g_agent);
  register_memory_classes(*g_agent);
  register_error_class(*g_agent);
  register_metadata_class(*g_agent);
  store_release(g_hot.recording, true);
  if (opts.cycle_watch > 0 ||
      (opts.cycle_watch < 0 && timers::info(timers::timer_kind::cycle).needs_rate_checks))
    start_cycle_watch(h, opts.cycle_watch_interval_ms);
  last_error_text().clear();
  return true;
}

// Every program that links the agent has the service table for its plugins
// (pfs_service.h; agent_service.cpp would otherwise be left out of a static link).
extern "C" const void* pfs_get_interface(int version);
[[gnu::used]] const void* (*const g_keep_service)(int) = &pfs_get_interface;

const std::string& last_error() { return detail::last_error_text(); }
bool active() { return agent_running(); }

const region_map* current_region() { return g_agent != nullptr ? &g_agent->region : nullptr; }

void shutdown() {
  agent_state* a = g_agent;
  if (a == nullptr || !load_relaxed(g_hot.recording)) return;
  store_relaxed(g_hot.recording, false);
  // The mapping stays: live objects hold pointers to their class flags. We only
  // stop recording, mark the region as finished and release the alive lock.
  setup::set_consumer(a->region, kConsumerGlobalInstrumentation, false);
  if (tls_context != nullptr) trace_close(tls_context->trace);
  store_release(a->header->exited, 1u);
  if (a->remove_at_exit) a->region.unlink_file();
  a->region.release_alive_lock();
}

bool set_instrument(const std::string& pattern, bool enabled, bool timed) {
  agent_state* a = g_agent;
  if (a == nullptr) return false;
  std::lock_guard<std::mutex> guard(a->registry_mutex);
  setup_lock_guard setup(a->region);
  bool any = false;
  for (std::uint32_t i = 0; i < a->max_classes; ++i) {
    class_record& c = a->classes[i];
    if ((load_acquire(c.lock) & kStateMask) != kStateAllocated || c.kind == kKindThread) continue;
    if (!like_match(pattern.c_str(), c.name)) continue;
    setup::set_instrument(a->region, i + 1, enabled ? 1 : 0, timed ? 1 : 0);
    any = true;
  }
  return any;
}

bool set_instrument_trace(const std::string& pattern, bool trace) {
  agent_state* a = g_agent;
  if (a == nullptr) return false;
  std::lock_guard<std::mutex> guard(a->registry_mutex);
  setup_lock_guard setup(a->region);
  bool ok = true;
  for (std::uint32_t i = 0; i < a->max_classes; ++i) {
    class_record& c = a->classes[i];
    if ((load_acquire(c.lock) & kStateMask) != kStateAllocated || c.kind == kKindThread) continue;
    if (like_match(pattern.c_str(), c.name))
      ok &= setup::set_instrument(a->region, i + 1, -1, -1, trace ? 1 : 0);
  }
  return ok;
}

bool set_actor_trace(const std::string& host, const std::string& user, const std::string& role, bool trace) {
  agent_state* a = g_agent;
  if (a == nullptr) return false;
  std::lock_guard<std::mutex> guard(a->registry_mutex);
  setup_lock_guard setup(a->region);
  return setup::update_actor(a->region, host, user, role, -1, -1, trace ? 1 : 0) == setup::actor_result::ok;
}

bool set_consumer(const std::string& name, bool enabled) {
  agent_state* a = g_agent;
  int id = setup::consumer_from_name(name);
  if (a == nullptr || id < 0) return false;
  std::lock_guard<std::mutex> guard(a->registry_mutex);
  setup_lock_guard setup(a->region);
  setup::set_consumer(a->region, static_cast<std::uint32_t>(id), enabled);
  return true;
}

bool set_wait_timer(const std::string& timer_name) {
  agent_state* a = g_agent;
  if (a == nullptr) return false;
  std::lock_guard<std::mutex> guard(a->registry_mutex);
  setup_lock_guard setup(a->region);
  return setup::set_wait_timer(a->region, timers::timer_from_name(timer_name));
}

}  // namespace pfs

// ---------------------------------------------------------------------------
// C ABI (registration and instances)
using namespace pfs;
using namespace pfs::detail;

extern "C" {

int pfs_init_from_env(void) {
  std::call_once(g_env_once, [] {
    if (g_agent != nullptr) return;
    std::string error;
    options o = options::from_environment(&error);
    if (o.region_path.empty()) {
      last_error_text() = "PFS_REGION is not set";
      return;
    }
    // Settings with malformed values are ignored (their defaults hold): said once.
    if (!error.empty()) report("warning: " + error);
    if (!pfs::init(o)) return;
    if (!error.empty()) last_error_text() = error;
  });
  return g_agent != nullptr ? 0 : -1;
}

const char* pfs_last_error(void) { return last_error_text().c_str(); }
int pfs_active(void) { return agent_running() ? 1 : 0; }
void pfs_shutdown(void) { pfs::shutdown(); }

static pfs_key register_kind(instrument_kind kind, const char* category, const char* name) {
  if (g_agent == nullptr) pfs_init_from_env();
  return register_class(kind, category, name);
}

pfs_key pfs_register_mutex(const char* category, const char* name) {
  return register_kind(kKindMutex, category, name);
}
pfs_key pfs_register_rwlock(const char* category, const char* name) {
  return register_kind(kKindRwlock, category, name);
}
pfs_key pfs_register_cond(const char* category, const char* name) {
  return register_kind(kKindCond, category, name);
}
pfs_key pfs_register_sem(const char* category, const char* name) {
  return register_kind(kKindSem, category, name);
}
pfs_key pfs_register_thread(const char* category, const char* name) {
  return register_kind(kKindThread, category, name);
}

const volatile unsigned char* pfs_class_flags(pfs_key key) {
  agent_state* a = g_agent;
  if (a == nullptr || key == 0 || key > a->max_classes) return &pfs::detail::kNoFlags;
  return &a->classes[key - 1].derived;
}

pfs_sync* pfs_init_mutex(pfs_key key, const void* identity) {
  return reinterpret_cast<pfs_sync*>(create_instance(kKindMutex, key, identity));
}
pfs_sync* pfs_init_rwlock(pfs_key key, const void* identity) {
  return reinterpret_cast<pfs_sync*>(create_instance(kKindRwlock, key, identity));
}
pfs_sync* pfs_init_cond(pfs_key key, const void* identity) {
  return reinterpret_cast<pfs_sync*>(create_instance(kKindCond, key, identity));
}
pfs_sync* pfs_init_sem(pfs_key key, const void* identity) {
  return reinterpret_cast<pfs_sync*>(create_instance(kKindSem, key, identity));
}
void pfs_destroy_sync(pfs_sync* handle) { destroy_instance(reinterpret_cast<sync_instance*>(handle)); }

}  // extern "C"

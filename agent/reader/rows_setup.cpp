// Row builders of the setup tables, threads, performance_timers and status.
#include "agent/reader/internal/reader_internal.h"
#include "agent/region/io_layout.h"
#include "agent/region/setup.h"
#include "timers/timer_detail.h"

namespace pfs::reader::detail {

void rows_setup_instruments(scan_state& s) {
  s.load_classes();
  for (const class_entry& c : s.classes) {
    if (!c.valid || c.kind == kKindThread) continue;
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view(c.name)));
    x.push_back(yes_no((c.flags & kFlagEnabled) != 0));
    x.push_back(never_timed(c.kind) ? null_cell() : yes_no((c.flags & kFlagTimed) != 0));
    x.push_back(yes_no((c.flags & kFlagTraced) != 0));
  }
}

void rows_setup_consumers(scan_state& s) {
  for (std::uint32_t id = 0; id < kConsumerCount; ++id) {
    auto& x = s.add_row();
    x.push_back(s.text_cell(setup::consumer_name(id)));
    x.push_back(yes_no(load_relaxed(s.h.consumers[id]) != 0));
  }
}

void rows_setup_timers(scan_state& s) {
  for (std::uint32_t row = 0; row < setup::kTimerRows; ++row) {
    const auto r = static_cast<setup::timer_row>(row);
    const std::uint8_t kind = load_relaxed(*setup::timer_field(const_cast<region_header&>(s.h), r));
    auto& x = s.add_row();
    x.push_back(s.text_cell(setup::timer_row_name(r)));
    x.push_back(kind >= 1 && kind < timers::timer_kind_count
                    ? s.text_cell(timers::timer_name(static_cast<timers::timer_kind>(kind)))
                    : null_cell());
  }
}

void rows_setup_actors(scan_state& s) {
  for (std::uint64_t i = 0; i < s.r.count(kArraySetupActors); ++i) {
    actor_copy a;
    if (!s.accept(read_actor(*s.r.at<actor_record>(kArraySetupActors, i), a))) continue;
    auto& x = s.add_row();
    x.push_back(s.text_cell(a.host.str()));
    x.push_back(s.text_cell(a.user.str()));
    x.push_back(s.text_cell(a.role.str()));
    x.push_back(yes_no(a.enabled != 0));
    x.push_back(yes_no(a.history != 0));
    x.push_back(yes_no(a.trace_enabled != 0));
  }
}

// performance_timers: TIMER_FREQUENCY is the provider's calibration, read from
// the region (what its raw values are converted with; NULL where the provider
// could not use the timer). TIMER_RESOLUTION and TIMER_OVERHEAD are this host's,
// measured by the reader: the resolution once per process, the overhead at every
// scan (WL#2360: the table is recomputed at each SELECT); NULL where this
// process cannot read the timer.
void rows_performance_timers(scan_state& s) {
  for (int k = 1; k < timers::timer_kind_count; ++k) {
    const auto kind = static_cast<timers::timer_kind>(k);
    const auto& d = s.h.timers[k];
    const std::uint32_t available = load_relaxed(d.available);
    double frequency = 0;
    __atomic_load(&d.frequency, &frequency, __ATOMIC_RELAXED);
    if (kind == timers::timer_kind::cycle)
      frequency = cycle_frequency_in_force(s.h);  // the latest recalibration
    auto& x = s.add_row();
    x.push_back(s.text_cell(timers::timer_name(kind)));
    if (available != 0 && std::isfinite(frequency) && frequency > 0) {
      const double f = std::round(frequency);
      x.push_back(int_cell(f >= 9.2e18 ? kInt64Max : static_cast<std::uint64_t>(f)));
    } else {
      x.push_back(null_cell());
    }
    const timers::timer_info& here = timers::info(kind);
    if (here.available) {
      x.push_back(int_cell(here.resolution));
      x.push_back(int_cell(timers::detail::measure_overhead(kind)));
    } else {
      x.push_back(null_cell());
      x.push_back(null_cell());
    }
  }
}

void rows_threads(scan_state& s) {
  s.load_timers();
  const row_filter* filter = s.out.filter;
  for (std::uint64_t i = 0, n = s.r.used_threads(); i < n; ++i) {
    thread_copy t;
    // A free slot first: most are, and the records below are large to zero.
    const rd res = read_thread(*s.r.at<thread_record>(kArrayThreads, i), t);
    if (!s.accept(res)) continue;
    // THREAD_ID tested before the row is built (WHERE thread_id = ...; the filter
    // tests the whole row again).
    if (filter != nullptr && !filter->may_match_int(0, clamp64(t.thread_id))) continue;
    // What the thread is doing: its outermost statement and its stage.
    std::uint32_t depth = 0;
    std::uint64_t processlist_id = 0, last_end = 0;
    std::uint8_t connection = 0, last_timer = 0;
    statement_record top{};
    std::string info;
    bool top_ok = false;
    stage_record stage{};
    bool stage_ok = false;
    const thread_record& tr = *s.r.at<thread_record>(kArrayThreads, i);
    depth = load_relaxed(tr.statement_depth);
    processlist_id = load_relaxed(tr.processlist_id);
    connection = load_relaxed(tr.connection_type);
    last_end = load_relaxed(tr.last_statement_end);
    last_timer = load_relaxed(tr.last_end_timer);
    if (const char* p = s.r.at_stride(kArrayStatementCurrent, i * s.r.statement_stack)) {
      if (s.r.statement_stack != 0 && read_statement(*reinterpret_cast<const statement_record*>(p), top, info,
                                                     s.r.max_sql_text_length) == rd::ok)
        top_ok = load_relaxed(top.thread_id) == t.thread_id;
    }
    if (const stage_record* sr = s.r.at<stage_record>(kArrayStageCurrent, i))
      stage_ok = read_seq_record(*sr, stage) == rd::ok && stage.thread_id == t.thread_id;
    const bool in_statement =
        top_ok && depth > 0 && (top.state == kWaitRunning || top.state == kWorkHiddenRunning);
    const class_entry* c = s.class_on_demand(t.class_index);
    const bool foreground = t.foreground != 0 || processlist_id != 0;
    auto& x = s.add_row();
    x.push_back(int_cell(t.thread_id));
    x.push_back(s.text_cell(c != nullptr && c->kind == kKindThread ? std::string_view(c->name)
                                                                   : kUnknownThreadClass));
    x.push_back(s.text_cell(std::string_view(foreground ? "FOREGROUND" : "BACKGROUND")));
    x.push_back(nullable_int(processlist_id));
    x.push_back(t.user.empty() ? null_cell() : s.text_cell(t.user.str()));
    x.push_back(t.host.empty() ? null_cell() : s.text_cell(t.host.str()));
    // processlist_db: the schema of its current (or last) outermost statement.
    fixed_str<kObjectSchemaLen> db;
    if (top_ok) db.load(top.current_schema);
    x.push_back(db.empty() ? null_cell() : s.text_cell(db.str()));
    x.push_back(!foreground ? null_cell() : stable_text(std::string_view(in_statement ? "Query" : "Sleep")));
    // processlist_time: seconds in the current statement, or since the last one ended.
    std::optional<std::uint64_t> since;
    if (in_statement && top.timer != 0)
      since = s.elapsed_now(top.timer, top.timer_start);
    else if (foreground && last_timer != 0)
      since = s.elapsed_now(last_timer, last_end);
    x.push_back(since ? int_cell(*since / 1000000000000ull) : null_cell());
    const bool stage_running = stage_ok && (stage.state == kWaitRunning || stage.state == kWorkHiddenRunning);
    const class_entry* sc = stage_running ? s.class_on_demand(stage.class_index) : nullptr;
    if (sc != nullptr) {
      const std::size_t slash = sc->name.rfind('/');
      x.push_back(s.text_cell(std::string_view(sc->name).substr(slash == std::string::npos ? 0 : slash + 1)));
    } else {
      x.push_back(null_cell());
    }
    x.push_back(in_statement && top.has_text != 0 ? s.text_cell(std::move(info)) : null_cell());
    x.push_back(nullable_int(t.parent_thread_id));
    x.push_back(t.role.empty() ? null_cell() : s.text_cell(t.role.str()));
    x.push_back(yes_no(t.instrumented != 0));
    x.push_back(yes_no(t.history != 0));
    constexpr const char* kConnection[] = {nullptr,      "TCP/IP",  "Socket",
                                           "Named Pipe", "SSL/TLS", "Shared Memory"};
    x.push_back(connection > 0 && connection < kConnectionCount
                    ? stable_text(std::string_view(kConnection[connection]))
                    : null_cell());
    x.push_back(nullable_int(t.os_thread_id));
    x.push_back(null_cell());                               // resource_group
    x.push_back(stable_text(std::string_view("PRIMARY")));  // execution_engine
    x.push_back(int_cell_signed(t.controlled_memory));
    x.push_back(int_cell_signed(t.max_controlled_memory));
    x.push_back(int_cell_signed(t.total_memory));
    x.push_back(int_cell_signed(t.max_total_memory));
    x.push_back(t.name.empty() ? null_cell() : s.text_cell(t.name.str()));  // thread_name
  }
}

void rows_setup_objects(scan_state& s) {
  for (std::uint64_t i = 0; i < s.r.count(kArraySetupObjects); ++i) {
    object_copy o;
    if (!s.accept(read_object(*s.r.at<object_record>(kArraySetupObjects, i), o))) continue;
    if (o.object_type != kSetupObjectTable) {
      ++s.invalid;
      continue;
    }
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view("TABLE")));
    x.push_back(s.text_cell(o.schema.str()));
    x.push_back(s.text_cell(o.name.str()));
    x.push_back(yes_no(o.enabled != 0));
    x.push_back(yes_no(o.timed != 0));
  }
}

void rows_status(scan_state& s) {
  const bool alive = s.r.map.provider_alive();
  const std::uint64_t torn_total = s.r.torn.load(std::memory_order_relaxed);
  const std::uint64_t invalid_total = s.r.invalid.load(std::memory_order_relaxed);
  auto put = [&s](std::string name, std::uint64_t v) {
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::move(name)));
    x.push_back(int_cell(v));
  };
  put("layout_version", load_relaxed(s.h.layout_version));
  put("pid", load_relaxed(s.h.pid));
  put("provider_alive", alive ? 1 : 0);
  put("creation_time_ns", load_relaxed(s.h.creation_time_ns));
  put("ready", load_relaxed(s.h.ready));
  put("exited", load_relaxed(s.h.exited));
  put("setup_generation", load_relaxed(s.h.setup_generation));
  put("next_thread_id", load_relaxed(s.h.next_thread_id));
  put("wait_stack_depth", s.r.stack_depth);
  put("history_per_thread", s.r.history_per_thread);
  put("history_long_batch", s.r.history_long_batch);
  put("max_indexes_per_table", s.r.indexes_per_table);
  for (const known_array& k : kKnownArrays) {
    const std::uint64_t n = s.r.count(k.id);
    put(std::string(k.status_name) + "_size", n);
    put(std::string(k.status_name) + "_memory", n * (k.stride != 0 ? k.stride : s.r.statement_stride));
  }
  put("total_memory", s.r.map.size());
  for (std::uint32_t id = 0; id < kLostCount; ++id) put(kLostNames[id], load_relaxed(s.h.lost[id]));
  put("torn_rows_skipped", torn_total);
  put("invalid_rows_skipped", invalid_total);
  // CYCLE's rate checks by the provider (where the kernel does not vouch for it).
  put("cycle_rate_watch", load_relaxed(s.h.cycle_watch));
  put("cycle_rate_checks", load_relaxed(s.h.cycle_checks));
  put("cycle_recalibrations", load_relaxed(s.h.cycle_epoch_count));
  put("cycle_max_drift_ppb", load_relaxed(s.h.cycle_max_drift_ppb));
}

namespace {
struct scan_scratch {
  std::vector<cell> slots;
  std::string texts[16];
};
}  // namespace

void scan_state::swap_scratch() noexcept {
  static_assert(kTextSlots == 16);
  thread_local scan_scratch spare;  // a nested scan finds it empty and allocates its own
  cur_.slots.swap(spare.slots);
  for (unsigned i = 0; i < kTextSlots; ++i) text_slots_[i].swap(spare.texts[i]);
}

const class_entry* scan_state::class_on_demand(std::uint32_t index) {
  if (classes_loaded_) return class_at(index);
  if (index == 0 || index > r.classes) return nullptr;
  for (std::size_t k = 0; k < on_demand_count_; ++k)
    if (on_demand_[k].first == index) return on_demand_[k].second.valid ? &on_demand_[k].second : nullptr;
  if (on_demand_count_ == on_demand_.size()) {  // many classes: all of them
    load_classes();
    return class_at(index);
  }
  auto& [at, e] = on_demand_[on_demand_count_++];
  at = index;
  std::lock_guard<std::mutex> names_guard(r.class_names_mutex);
  if (r.class_names.size() < r.classes)
    r.class_names.resize(r.classes);  // once: its strings never move after
  copy_class(index - 1, e);
  return e.valid ? &e : nullptr;
}

// Class record i into e (r.class_names_mutex held).
void scan_state::copy_class(std::uint64_t i, class_entry& e) {
  class_copy c;
  std::string& name = r.class_names[i];
  if (!accept(read_class(*r.at<class_record>(kArrayClasses, i), c, name.empty()))) return;
  e.valid = true;
  e.kind = c.kind;
  e.flags = c.flags;
  e.traits = c.traits;
  e.stat = c.stat;
  e.kind_index = c.kind_index;
  if (name.empty()) name = c.name.str();
  e.name = name;
}

// Every class record, copied once per scan.
void scan_state::load_classes() {
  if (classes_loaded_) return;
  classes_loaded_ = true;
  // Up to the last record in use: a region has room for many more classes than a
  // program registers (the agent allocates them in order and never frees them).
  std::uint64_t n = r.used_classes();
  while (n > 0 && (load_acquire(r.at<class_record>(kArrayClasses, n - 1)->lock) & kStateMask) == kStateFree)
    --n;
  classes.resize(n);
  std::lock_guard<std::mutex> names_guard(r.class_names_mutex);
  if (r.class_names.size() < n) r.class_names.resize(r.classes);  // once: its strings never move after
  for (std::uint64_t i = 0; i < n; ++i) copy_class(i, classes[i]);
}

std::vector<scan_state::indexed_class> scan_state::load_classes_of_kind(bool (*of_kind)(std::uint8_t)) {
  std::vector<indexed_class> found;
  if (classes_loaded_) {
    for (std::size_t c = 0; c < classes.size(); ++c)
      if (classes[c].valid && of_kind(classes[c].kind))
        found.push_back(indexed_class{static_cast<std::uint32_t>(c), classes[c]});
    return found;
  }
  std::lock_guard<std::mutex> names_guard(r.class_names_mutex);
  if (r.class_names.size() < r.classes)
    r.class_names.resize(r.classes);  // once: its strings never move after
  std::vector<std::uint8_t>& kinds = r.class_kinds;
  // Up to the last record in use, as load_classes reads them.
  std::uint64_t n = r.used_classes();
  while (n > kinds.size() &&
         (load_acquire(r.at<class_record>(kArrayClasses, n - 1)->lock) & kStateMask) == kStateFree)
    --n;
  // Only the records of the kind are copied (a program has many classes of other
  // kinds: stages, statements, memory), and only into this scan's list.
  indexed_class x{};
  for (std::uint64_t i = 0; i < n; ++i) {
    const bool known = i < kinds.size();
    if (known && !of_kind(kinds[i])) continue;
    x.index = static_cast<std::uint32_t>(i);
    x.entry = class_entry{};
    copy_class(i, x.entry);
    // The kinds read whole extend those known (a record being registered or changed
    // now is read again by the next scan).
    if (!known && kinds.size() == i && x.entry.valid) kinds.push_back(x.entry.kind);
    if (x.entry.valid && of_kind(x.entry.kind)) found.push_back(x);
  }
  return found;
}

}  // namespace pfs::reader::detail

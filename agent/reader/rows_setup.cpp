// Row builders of the setup tables, threads, performance_timers and status.
#include "agent/reader/reader_internal.h"
#include "agent/region/setup.h"

namespace pfs::reader::detail {

void scanner::setup_instruments() {
  load_classes();
  for (const class_entry& c : classes_) {
    if (!c.valid || c.kind == kKindThread) continue;
    auto& x = add_row();
    x.push_back(text_cell(std::string_view(c.name)));
    x.push_back(yes_no((c.flags & kFlagEnabled) != 0));
    x.push_back(yes_no((c.flags & kFlagTimed) != 0));
    x.push_back(yes_no((c.flags & kFlagTraced) != 0));
  }
}

void scanner::setup_consumers() {
  for (std::uint32_t id = 0; id < kConsumerCount; ++id) {
    auto& x = add_row();
    x.push_back(text_cell(setup::consumer_name(id)));
    x.push_back(yes_no(load_relaxed(h_.consumers[id]) != 0));
  }
}

void scanner::setup_timers() {
  const std::uint8_t kind = load_relaxed(h_.wait_timer);
  auto& x = add_row();
  x.push_back(text_cell(std::string_view("wait")));
  x.push_back(kind >= 1 && kind < timers::timer_kind_count
                  ? text_cell(timers::timer_name(static_cast<timers::timer_kind>(kind)))
                  : null_cell());
}

void scanner::setup_actors() {
  for (std::uint64_t i = 0; i < r_.count(kArraySetupActors); ++i) {
    actor_copy a;
    if (!accept(read_actor(*r_.at<actor_record>(kArraySetupActors, i), a))) continue;
    auto& x = add_row();
    x.push_back(text_cell(a.host.str()));
    x.push_back(text_cell(a.user.str()));
    x.push_back(text_cell(a.role.str()));
    x.push_back(yes_no(a.enabled != 0));
    x.push_back(yes_no(a.history != 0));
    x.push_back(yes_no(a.trace_enabled != 0));
  }
}

void scanner::performance_timers() {
  for (int k = 1; k < timers::timer_kind_count; ++k) {
    const auto kind = static_cast<timers::timer_kind>(k);
    const timers::timer_info& ti = timers::info(kind);
    auto& x = add_row();
    x.push_back(text_cell(timers::timer_name(kind)));
    if (ti.available && std::isfinite(ti.frequency) && ti.frequency > 0) {
      const double f = std::round(ti.frequency);
      x.push_back(int_cell(f >= 9.2e18 ? kInt64Max : static_cast<std::uint64_t>(f)));
      x.push_back(int_cell(ti.resolution));
      x.push_back(int_cell(ti.overhead));
    } else {
      x.push_back(null_cell());
      x.push_back(null_cell());
      x.push_back(null_cell());
    }
  }
}

void scanner::threads() {
  load_classes();
  for (std::uint64_t i = 0; i < r_.threads; ++i) {
    thread_copy t;
    if (!accept(read_thread(*r_.at<thread_record>(kArrayThreads, i), t))) continue;
    const class_entry* c = class_at(t.class_index);
    auto& x = add_row();
    x.push_back(int_cell(t.thread_id));
    x.push_back(
        text_cell(c != nullptr && c->kind == kKindThread ? std::string_view(c->name) : kUnknownThreadClass));
    x.push_back(text_cell(std::string_view(t.foreground != 0 ? "FOREGROUND" : "BACKGROUND")));
    x.push_back(t.user.empty() ? null_cell() : text_cell(t.user.str()));
    x.push_back(t.host.empty() ? null_cell() : text_cell(t.host.str()));
    x.push_back(t.role.empty() ? null_cell() : text_cell(t.role.str()));
    x.push_back(yes_no(t.instrumented != 0));
    x.push_back(yes_no(t.history != 0));
    x.push_back(nullable_int(t.parent_thread_id));
    x.push_back(nullable_int(t.os_thread_id));
  }
}

void scanner::setup_objects() {
  for (std::uint64_t i = 0; i < r_.count(kArraySetupObjects); ++i) {
    object_copy o;
    if (!accept(read_object(*r_.at<object_record>(kArraySetupObjects, i), o))) continue;
    if (o.object_type != kSetupObjectTable) {
      ++invalid;
      continue;
    }
    auto& x = add_row();
    x.push_back(text_cell(std::string_view("TABLE")));
    x.push_back(text_cell(o.schema.str()));
    x.push_back(text_cell(o.name.str()));
    x.push_back(yes_no(o.enabled != 0));
    x.push_back(yes_no(o.timed != 0));
  }
}

void scanner::status() {
  const bool alive = r_.map.provider_alive();
  const std::uint64_t torn_total = r_.torn.load(std::memory_order_relaxed);
  const std::uint64_t invalid_total = r_.invalid.load(std::memory_order_relaxed);
  auto put = [this](std::string name, std::uint64_t v) {
    auto& x = add_row();
    x.push_back(text_cell(std::move(name)));
    x.push_back(int_cell(v));
  };
  put("layout_version", load_relaxed(h_.layout_version));
  put("pid", load_relaxed(h_.pid));
  put("provider_alive", alive ? 1 : 0);
  put("creation_time_ns", load_relaxed(h_.creation_time_ns));
  put("ready", load_relaxed(h_.ready));
  put("exited", load_relaxed(h_.exited));
  put("setup_generation", load_relaxed(h_.setup_generation));
  put("next_thread_id", load_relaxed(h_.next_thread_id));
  put("wait_stack_depth", r_.stack_depth);
  put("history_per_thread", r_.history_per_thread);
  put("history_long_batch", r_.history_long_batch);
  put("max_indexes_per_table", r_.indexes_per_table);
  for (const known_array& k : kKnownArrays) {
    const std::uint64_t n = r_.count(k.id);
    put(std::string(k.status_name) + "_size", n);
    put(std::string(k.status_name) + "_memory", n * k.stride);
  }
  put("total_memory", r_.map.size());
  for (std::uint32_t id = 0; id < kLostCount; ++id) put(kLostNames[id], load_relaxed(h_.lost[id]));
  put("torn_rows_skipped", torn_total);
  put("invalid_rows_skipped", invalid_total);
}

// Every class record, copied once per scan.
void scanner::load_classes() {
  if (classes_loaded_) return;
  classes_loaded_ = true;
  classes_.resize(r_.classes);
  for (std::uint64_t i = 0; i < r_.classes; ++i) {
    class_copy c;
    if (!accept(read_class(*r_.at<class_record>(kArrayClasses, i), c))) continue;
    class_entry& e = classes_[i];
    e.valid = true;
    e.kind = c.kind;
    e.flags = c.flags;
    e.stat = c.stat;
    e.name = c.name.str();
  }
}

}  // namespace pfs::reader::detail

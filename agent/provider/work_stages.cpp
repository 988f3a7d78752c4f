// Stages (MySQL 5.7): events_stages_*; one running per thread, inside its statement.
#include "agent/provider/internal/work_api.h"
#include "agent/provider/internal/work_internal.h"

namespace pfs::detail {

void end_stage(thread_context& t, work_state& w) {
  if (!w.stage_running) return;
  stage_record& r = *w.stage;
  const std::uint8_t timer = timer_kind_of(event_clock(load_relaxed(r.timer)));  // the clock
  const std::uint64_t end = timer != 0 ? read_timer(timer) : 0;
  const std::uint64_t ps = elapsed_ps(timer, load_relaxed(r.timer_start), end);
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.state, shown(w.stage_flags & kWorkStagesCurrent, false));
  store_relaxed(r.end_event_id, t.next_event_id);
  store_relaxed(r.timer_end, end);
  end_record_write(r, seq);
  aggregate_single(w.stage_stats[w.stage_kind_index], timer != 0, ps);
  if ((w.stage_flags & kWorkStagesHistory) && w.stage_history_size != 0) {
    publish_record(w.stage_history[w.stage_history_index % w.stage_history_size], r, sizeof(stage_record));
    store_relaxed(t.rec->stage_history_index, ++w.stage_history_index);
  }
  if ((w.stage_flags & kWorkStagesHistoryLong) && g_work.stage_long_size != 0) {
    const std::uint64_t i = next_long_slot(g_work.header->stages_long_next);
    publish_record(g_work.stage_long[i % g_work.stage_long_size], r, sizeof(stage_record));
  }
  w.stage_running = false;
  restore_nest(t, w);
}

}  // namespace pfs::detail

namespace pfs::detail::work_c {

using namespace pfs;
using namespace pfs::detail;

uint64_t stage_start(pfs_key key, const char* file, unsigned line) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr) return 0;
  end_stage(*t, *w);  // MySQL: a new stage ends the running one
  const class_record* c = class_of(key, kKindStage);
  if (c == nullptr) {
    if (key != 0) call_error();
    return 0;
  }
  const std::uint8_t cflags = load_relaxed(c->derived);
  const std::uint32_t flags = load_relaxed(t->rec->work_derived);
  if ((cflags & kFlagEnabled) == 0 || (flags & kWorkEnabled) == 0 || w->stage_stats == nullptr) return 0;
  const std::uint8_t timer = (cflags & kFlagTimed)
                                 ? work_timer(timer_kind_of(load_relaxed(g_work.header->stage_timer)))
                                 : std::uint8_t{0};
  const std::uint64_t start = timer != 0 ? read_timer(event_clock(timer)) : 0;
  const std::uint64_t event_id = t->next_event_id++;
  stage_record& r = *w->stage;
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.state, shown(flags & kWorkStagesCurrent, true));
  store_relaxed(r.timer, timer);
  store_relaxed(r.nesting_type, w->depth > 0 ? kNestingStatement : kNestingNone);
  store_relaxed(r.class_index, key);
  store_relaxed(r.source_index, intern_source(*t, file, line));
  store_relaxed(r.thread_id, t->thread_id);
  store_relaxed(r.event_id, event_id);
  store_relaxed(r.end_event_id, std::uint64_t{0});
  store_relaxed(r.nesting_event_id, w->depth > 0 ? load_relaxed(w->statement_at(w->depth - 1).event_id) : 0);
  store_relaxed(r.timer_start, start);
  store_relaxed(r.timer_end, std::uint64_t{0});
  store_relaxed(r.work_completed, kNoWork);
  store_relaxed(r.work_estimated, kNoWork);
  end_record_write(r, seq);
  w->stage_running = true;
  w->stage_kind_index = c->kind_index < g_work.max_stage_classes ? c->kind_index : 0;
  w->stage_flags = flags;
  store_relaxed(t->rec->event_id, t->next_event_id);
  t->nest_event_id = event_id;
  t->nest_type = kNestingStage;
  return event_id;
}

void stage_set_progress(uint64_t completed, uint64_t estimated) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr || !w->stage_running) return;
  stage_record& r = *w->stage;
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.work_completed, completed);
  store_relaxed(r.work_estimated, estimated);
  end_record_write(r, seq);
}

void stage_end(void) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr) return;
  end_stage(*t, *w);
  store_relaxed(t->rec->event_id, t->next_event_id);
}

void stage_end_event(uint64_t event_id) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr || !w->stage_running || event_id == 0 || load_relaxed(w->stage->event_id) != event_id)
    return;
  end_stage(*t, *w);
  store_relaxed(t->rec->event_id, t->next_event_id);
}

}  // namespace pfs::detail::work_c

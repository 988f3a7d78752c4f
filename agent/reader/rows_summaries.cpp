// Row builders of the events_waits_summary_* and the synch instance tables.
#include "agent/reader/reader_internal.h"
#include "agent/region/histogram.h"

namespace pfs::reader::detail {

// events_waits_summary_global_by_event_name: per class, the bucket of exited
// threads plus every live thread's global statistics (kept apart from the
// instances and the by-thread summaries, so each consumer freezes its own table).
void scan_state::summary_global() {
  load_classes();
  std::vector<wait_stat> sums(classes.size(), kZeroStat);
  const std::vector<latency_histogram> histograms = wait_class_histograms();
  for (std::size_t c = 0; c < classes.size(); ++c)
    if (classes[c].valid && is_wait_kind(classes[c].kind)) merge_stat(sums[c], classes[c].stat);
  for (const live_thread& t : live_threads()) {
    for (std::size_t c = 0; c < classes.size(); ++c) {
      if (!classes[c].valid || !is_wait_kind(classes[c].kind)) continue;
      const wait_stat* s = r.at<wait_stat>(kArrayThreadGlobalStats, t.slot * r.classes + c);
      if (s != nullptr) merge_stat(sums[c], load_stat(*s));
    }
  }
  for (std::size_t c = 0; c < classes.size(); ++c) {
    if (!classes[c].valid || !is_wait_kind(classes[c].kind)) continue;
    // Table io counts only: its time stays out of the wait summaries (WL#4895).
    if (classes[c].kind == kKindTable) sums[c] = wait_stat{sums[c].count, 0, kNoMin, 0, 0};
    auto& x = add_row();
    x.push_back(text_cell(std::string_view(classes[c].name)));
    append_stat_cells(x, sums[c]);
    // Beyond MySQL: the latency distribution of the class.
    for (double q : {0.95, 0.99, 0.999}) x.push_back(int_cell(histogram::quantile(histograms[c].counts, q)));
  }
}

void scan_state::summary_by_thread() {
  load_classes();
  std::vector<wait_stat> stats(classes.size());
  for (std::uint64_t i = 0; i < r.threads; ++i) {
    const thread_record& tr = *r.at<thread_record>(kArrayThreads, i);
    std::uint64_t tid = 0;
    // The thread's statistics, copied while its record stays the same thread.
    const rd res = read_versioned(tr, [&](const thread_record& t) {
      tid = load_relaxed(t.thread_id);
      for (std::size_t c = 0; c < classes.size(); ++c) {
        if (!classes[c].valid || !is_wait_kind(classes[c].kind)) continue;
        const wait_stat* s = r.at<wait_stat>(kArrayThreadClassStats, i * r.classes + c);
        stats[c] = s != nullptr ? load_stat(*s) : kZeroStat;
      }
    });
    if (!accept(res)) continue;
    for (std::size_t c = 0; c < classes.size(); ++c) {
      if (!classes[c].valid || !is_wait_kind(classes[c].kind)) continue;
      auto& x = add_row();
      x.push_back(int_cell(tid));
      x.push_back(text_cell(std::string_view(classes[c].name)));
      append_stat_cells(x, stats[c]);
    }
  }
}

// Sync instance tables: events_waits_summary_by_instance (all three arrays), or
// the instance table of one array.
void scan_state::sync_instances(table_id which) {
  load_classes();
  const bool summary = which == table_id::events_waits_summary_by_instance;
  for (array_id arr : {kArrayMutexes, kArrayRwlocks, kArrayConds}) {
    if (!summary && !((which == table_id::mutex_instances && arr == kArrayMutexes) ||
                      (which == table_id::rwlock_instances && arr == kArrayRwlocks) ||
                      (which == table_id::cond_instances && arr == kArrayConds)))
      continue;
    for (std::uint64_t i = 0; i < r.count(arr); ++i) {
      sync_copy s;
      if (!accept(read_sync(*r.at<sync_instance>(arr, i), s))) continue;
      const class_entry* c = class_at(s.class_index);
      if (c == nullptr) {
        ++invalid;
        continue;
      }
      auto& x = add_row();
      x.push_back(text_cell(std::string_view(c->name)));
      x.push_back(int_cell(s.identity));
      if (summary) {
        append_stat_cells(x, s.stat);
      } else if (arr == kArrayMutexes) {
        x.push_back(nullable_int(s.owner_thread_id));
      } else if (arr == kArrayRwlocks) {
        x.push_back(nullable_int(s.owner_thread_id));
        x.push_back(int_cell(s.readers));
      }
    }
  }
  if (summary) {
    for_each_file([this](const file_copy& f, const class_entry& c) {
      auto& x = add_row();
      x.push_back(text_cell(std::string_view(c.name)));
      x.push_back(int_cell(f.identity));
      append_stat_cells(x, f.waits);
    });
    for_each_socket([this](const socket_copy& s, const class_entry& c) {
      auto& x = add_row();
      x.push_back(text_cell(std::string_view(c.name)));
      x.push_back(int_cell(s.identity));
      append_stat_cells(x, s.waits);
    });
  }
}

}  // namespace pfs::reader::detail

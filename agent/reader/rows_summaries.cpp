// Row builders of the events_waits_summary_* and the synch instance tables.
#include "agent/reader/internal/holder_rows.h"
#include "agent/reader/internal/reader_internal.h"
#include "agent/region/histogram.h"

namespace pfs::reader::detail {

// events_waits_summary_global_by_event_name: per class, the bucket of exited
// threads plus every live thread's global statistics (kept apart from the
// instances and the by-thread summaries, so each consumer freezes its own table).
void rows_waits_summary_global(scan_state& s) {
  // The latency quantiles (beyond MySQL) only when the query reads them: summing
  // the histograms is most of the work of a small scan of this table.
  constexpr std::size_t kFirstQuantileColumn = 6;  // after event_name and the 5 statistics
  bool quantiles = false;
  for (std::size_t k = kFirstQuantileColumn; k < kFirstQuantileColumn + 3; ++k)
    quantiles = quantiles || s.wants(k);
  if (quantiles) s.load_classes();  // every class: the histograms are by class index
  const class_histograms histograms = quantiles ? wait_class_histograms(s) : class_histograms{};
  const std::vector<scan_state::indexed_class> waits = s.load_classes_of_kind(is_wait_kind);
  std::vector<wait_stat> sums(waits.size(), kZeroStat);
  for (std::size_t k = 0; k < waits.size(); ++k) merge_stat(sums[k], waits[k].entry.stat);
  for (const live_thread& t : live_threads(s)) {
    for (std::size_t k = 0; k < waits.size(); ++k) {
      const wait_stat* w = s.r.at<wait_stat>(kArrayThreadGlobalStats, t.slot * s.r.classes + waits[k].index);
      if (w != nullptr) merge_stat(sums[k], load_stat(*w));
    }
  }
  for (std::size_t k = 0; k < waits.size(); ++k) {
    const class_entry& c = waits[k].entry;
    // Table io counts only: its time stays out of the wait summaries (WL#4895).
    if (c.kind == kKindTable) sums[k] = wait_stat{sums[k].count, 0, kNoMin, 0, 0};
    auto& x = s.add_row();
    x.push_back(s.text_cell(c.name));
    append_stat_cells(x, sums[k]);
    // Beyond MySQL: the latency distribution of the class.
    for (double q : {0.95, 0.99, 0.999})
      x.push_back(quantiles
                      ? int_cell(histogram::wait_scale::quantile(histograms.of(waits[k].index)->counts, q))
                      : null_cell());
  }
}

void rows_waits_summary_by_thread(scan_state& s) {
  s.load_classes();
  std::vector<wait_stat> stats(s.classes.size());
  for (std::uint64_t i = 0, n = s.r.used_threads(); i < n; ++i) {
    const thread_record& tr = *s.r.at<thread_record>(kArrayThreads, i);
    std::uint64_t tid = 0;
    // The thread's statistics, copied while its record stays the same thread.
    const rd res = read_versioned(tr, [&](const thread_record& t) {
      tid = load_relaxed(t.thread_id);
      for (std::size_t c = 0; c < s.classes.size(); ++c) {
        if (!s.classes[c].valid || !is_wait_kind(s.classes[c].kind)) continue;
        const wait_stat* w = s.r.at<wait_stat>(kArrayThreadClassStats, i * s.r.classes + c);
        stats[c] = w != nullptr ? load_stat(*w) : kZeroStat;
      }
    });
    if (!s.accept(res)) continue;
    for (std::size_t c = 0; c < s.classes.size(); ++c) {
      if (!s.classes[c].valid || !is_wait_kind(s.classes[c].kind)) continue;
      auto& x = s.add_row();
      x.push_back(int_cell(tid));
      x.push_back(s.text_cell(std::string_view(s.classes[c].name)));
      append_stat_cells(x, stats[c]);
    }
  }
}

void rows_waits_summary_by_holder(scan_state& s, summary_kind which) {
  s.load_classes();
  const std::vector<holder_copy> holders = load_holders(s);
  const auto kind = static_cast<holder_kind>(holder_kind_of(which));
  const auto sums = holder_sums<wait_stat>(
      s, holders, kind, kArrayThreadClassStats, kArrayAccountWaitStats, s.r.classes, kZeroStat,
      [](const wait_stat& w) { return load_stat(w); },
      [](wait_stat& into, const wait_stat& w) { merge_stat(into, w); });
  for (std::size_t h = 0; h < holders.size(); ++h) {
    if (holders[h].kind != kind || sums[h].empty()) continue;
    for (std::size_t c = 0; c < s.classes.size() && c < sums[h].size(); ++c) {
      if (!s.classes[c].valid || !is_wait_kind(s.classes[c].kind)) continue;
      auto& x = s.add_row();
      append_holder_key(s, x, holders[h]);
      x.push_back(s.text_cell(std::string_view(s.classes[c].name)));
      append_stat_cells(x, sums[h][c]);
    }
  }
}

namespace {

// The instances of one sync array: name, identity, then the table's own columns.
void sync_rows(scan_state& s, array_id arr, bool summary) {
  for (std::uint64_t i = 0; i < s.r.count(arr); ++i) {
    sync_copy k;
    if (!s.accept(read_sync(*s.r.at<sync_instance>(arr, i), k))) continue;
    const class_entry* c = s.class_at(k.class_index);
    if (c == nullptr) {
      ++s.invalid;
      continue;
    }
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view(c->name)));
    x.push_back(int_cell(k.identity));
    if (summary) {
      append_stat_cells(x, k.stat);
    } else if (arr == kArrayMutexes) {
      x.push_back(nullable_int(k.owner_thread_id));
    } else if (arr == kArrayRwlocks) {
      x.push_back(nullable_int(k.owner_thread_id));
      x.push_back(int_cell(k.readers));
    }
  }
}

}  // namespace

// mutex_instances, rwlock_instances, cond_instances or sem_instances: the instances of one array.
void rows_sync_instances(scan_state& s, array_id which) {
  s.load_classes();
  sync_rows(s, which, false);
}

// events_waits_summary_by_instance: every sync instance, file and socket.
void rows_waits_summary_by_instance(scan_state& s) {
  s.load_classes();
  for (array_id arr : {kArrayMutexes, kArrayRwlocks, kArrayConds, kArraySems}) sync_rows(s, arr, true);
  for_each_file(s, [&s](const file_copy& f, const class_entry& c) {
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view(c.name)));
    x.push_back(int_cell(f.identity));
    append_stat_cells(x, f.waits);
  });
  for_each_socket(s, [&s](const socket_copy& k, const class_entry& c) {
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view(c.name)));
    x.push_back(int_cell(k.identity));
    append_stat_cells(x, k.waits);
  });
}

}  // namespace pfs::reader::detail

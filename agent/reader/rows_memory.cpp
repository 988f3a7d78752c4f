// memory_summary_global_by_event_name and memory_summary_by_thread_by_event_name
// (MySQL 8.0): per memory class, and per live thread and class, the allocations and
// frees counted and the low, current and high marks of what is in use.
#include <algorithm>

#include "agent/reader/internal/holder_rows.h"
#include "agent/reader/internal/reader_internal.h"
#include "agent/region/memory_layout.h"

namespace pfs::reader::detail {
namespace {

// count_alloc ... high_number_of_bytes_used (10 columns).
void append_memory_cells(row_builder& x, const memory_stat& s) {
  x.push_back(int_cell(s.count_alloc));
  x.push_back(int_cell(s.count_free + s.claimed_count));
  x.push_back(int_cell(s.bytes_alloc));
  x.push_back(int_cell(s.bytes_free + s.claimed_bytes));
  const std::int64_t count_used = memory_current_count(s);
  const std::int64_t bytes_used = memory_current_bytes(s);
  // The marks as the writer kept them, never on the wrong side of what is in use
  // now (a claim by another thread lowers the current value without touching them).
  x.push_back(int_cell_signed(std::min(s.low_count, count_used)));
  x.push_back(int_cell_signed(count_used));
  x.push_back(int_cell_signed(std::max(s.high_count, count_used)));
  x.push_back(int_cell_signed(std::min(s.low_bytes, bytes_used)));
  x.push_back(int_cell_signed(bytes_used));
  x.push_back(int_cell_signed(std::max(s.high_bytes, bytes_used)));
}

}  // namespace

void rows_memory_summary(scan_state& s, summary_kind which) {
  if (by_holder(which)) {
    s.load_classes();
    const std::vector<holder_copy> holders = load_holders(s);
    const auto kind = static_cast<holder_kind>(holder_kind_of(which));
    const auto sums = holder_sums<memory_stat>(
        s, holders, kind, kArrayThreadMemoryStats, kArrayAccountMemoryStats, s.r.memory_classes,
        memory_stat{}, [](const memory_stat& m) { return load_memory_stat(m); },
        [](memory_stat& into, const memory_stat& m) { add_memory(into, m); });
    for (std::size_t h = 0; h < holders.size(); ++h) {
      if (holders[h].kind != kind || sums[h].empty()) continue;
      for (const class_entry& c : s.classes) {
        if (!c.valid || c.kind != kKindMemory || c.kind_index >= sums[h].size() ||
            (c.traits & kMemoryGlobalOnly))
          continue;
        auto& x = s.add_row();
        append_holder_key(s, x, holders[h]);
        x.push_back(s.text_cell(std::string_view(c.name)));
        append_memory_cells(x, sums[h][c.kind_index]);
      }
    }
    return;
  }
  const bool by_thread = which == summary_kind::by_thread;
  s.load_classes();
  const std::uint64_t per = s.r.memory_classes;
  std::vector<memory_stat> global(per, memory_stat{});
  if (!by_thread)
    for (std::uint64_t i = 0; i < per; ++i)
      global[i] = load_memory_stat(s.r.at<memory_class_stat>(kArrayClassMemoryStats, i)->stat);
  for (const live_thread& t : live_threads(s)) {
    for (const class_entry& c : s.classes) {
      if (!c.valid || c.kind != kKindMemory || c.kind_index >= per || (c.traits & kMemoryGlobalOnly))
        continue;
      const memory_stat mine =
          load_memory_stat(*s.r.at<memory_stat>(kArrayThreadMemoryStats, t.slot * per + c.kind_index));
      if (!by_thread) {
        add_memory(global[c.kind_index], mine);
        continue;
      }
      auto& x = s.add_row();
      x.push_back(int_cell(t.thread_id));
      x.push_back(s.text_cell(std::string_view(c.name)));
      append_memory_cells(x, mine);
    }
  }
  if (by_thread) return;
  for (const class_entry& c : s.classes) {
    if (!c.valid || c.kind != kKindMemory || c.kind_index >= per) continue;
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view(c.name)));
    append_memory_cells(x, global[c.kind_index]);
  }
}

}  // namespace pfs::reader::detail

// Row builder of lock_contention_by_instance: the contended waits of each mutex
// and rwlock instance, by the SOURCE of the holder's acquisition.
#include <map>
#include <string>
#include <tuple>

#include "agent/reader/internal/reader_internal.h"

namespace pfs::reader::detail {

void rows_lock_contention(scan_state& s) {
  s.load_classes();
  const std::uint64_t n = s.r.count(kArrayLockContention);
  // (kind, instance index, source, incarnation) -> the waits; the entries of one
  // key added up (two waiters claiming one key at once may have made two).
  using entry_key = std::tuple<std::uint64_t, std::uint64_t, std::uint32_t, std::uint32_t>;
  std::map<entry_key, wait_stat> waits;
  for (std::uint64_t i = 0; i < n; ++i) {
    const contention_record& e = *s.r.at<contention_record>(kArrayLockContention, i);
    const std::uint32_t incarnation = load_acquire(e.incarnation);
    const std::uint64_t key = load_relaxed(e.key);
    if (key == 0 || incarnation == 0) continue;
    const wait_stat stat = load_stat(e.stat);
    std::atomic_thread_fence(std::memory_order_acquire);
    // Freed (TRUNCATE) and claimed again meanwhile: its counts may be anyone's.
    if (load_relaxed(e.key) != key || load_relaxed(e.incarnation) != incarnation) continue;
    const std::uint64_t kind = key >> 62;
    const std::uint64_t index = (key >> 32) & 0x3FFFFFFFu;
    const array_id arr = kind == kContentionMutex ? kArrayMutexes : kArrayRwlocks;
    if ((kind != kContentionMutex && kind != kContentionRwlock) || index == 0 || index > s.r.count(arr)) {
      ++s.invalid;
      continue;
    }
    merge_stat(waits.try_emplace({kind, index, static_cast<std::uint32_t>(key), incarnation}, kZeroStat)
                   .first->second,
               stat);
  }
  // Only entries of the instance's present life: a lock destroyed and another
  // created in its slot starts with no contention. One row per SOURCE text: two
  // threads interning a site at once may have given it two source indexes.
  struct shown {
    const class_entry* cls;
    std::uint64_t identity;
    wait_stat stat;
  };
  std::map<std::tuple<std::uint64_t, std::uint64_t, bool, std::string>, shown> rows;
  for (const auto& [key, stat] : waits) {
    const auto& [kind, index, source, incarnation] = key;
    const array_id arr = kind == kContentionMutex ? kArrayMutexes : kArrayRwlocks;
    sync_copy k;
    std::uint32_t lock = 0;
    if (read_sync(*s.r.at<sync_instance>(arr, index - 1), k, &lock) != rd::ok || lock != incarnation)
      continue;
    const class_entry* c = s.class_at(k.class_index);
    if (c == nullptr) {
      ++s.invalid;
      continue;
    }
    const std::string* text = s.source_ref(source);
    merge_stat(rows.try_emplace({kind, index, text != nullptr, text != nullptr ? *text : std::string()},
                                shown{c, k.identity, kZeroStat})
                   .first->second.stat,
               stat);
  }
  for (const auto& [key, row] : rows) {
    const bool known = std::get<2>(key);
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view(row.cls->name)));
    x.push_back(int_cell(row.identity));
    x.push_back(known ? s.text_cell(std::string_view(std::get<3>(key))) : null_cell());
    append_stat_cells(x, row.stat);
  }
}

}  // namespace pfs::reader::detail

// Writes region records by hand, the way a provider leaves them between writes
// (allocated version+state words, even seqlock words), for the tools that write
// fixture regions (tools/pfs_fixture) and the tests that build regions record by
// record (tests/reader/test_reader, tests/reader/test_region_corruption). Never used by the
// provider itself. Single-threaded: plain stores.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>

#include "agent/region/io_layout.h"
#include "agent/region/region.h"
#include "agent/region/region_layout.h"
#include "agent/region/wide_sum.h"

namespace pfs {

class region_builder {
 public:
  static constexpr std::uint64_t kNoMin = std::numeric_limits<std::uint64_t>::max();
  static constexpr layout::wait_stat kNoWait{0, 0, kNoMin, 0, 0};
  static constexpr layout::io_stat kNoIo{0, 0, kNoMin, 0, 0, 0};
  static constexpr layout::io_stats kNoIoStats{kNoIo, kNoIo, kNoIo};
  static constexpr layout::table_io_stat kNoTableIo{kNoWait, kNoWait, kNoWait, kNoWait};

  explicit region_builder(region_map& m) : m_(m) {}

  // A version+state word: version counts kVersionInc steps.
  static std::uint32_t lock_word(std::uint32_t version, std::uint32_t state) {
    return version * layout::kVersionInc + state;
  }

  // Class `index` (1-based); derived starts equal to flags.
  layout::class_record& set_class(std::uint32_t index, std::uint8_t kind, const char* name,
                                  std::uint8_t flags, layout::wait_stat stat = kNoWait,
                                  std::uint32_t state = layout::kStateAllocated, std::uint32_t version = 1) {
    layout::class_record& c = m_.array<layout::class_record>(layout::kArrayClasses)[index - 1];
    c.lock = lock_word(version, state);
    c.kind = kind;
    c.flags = flags;
    c.derived = flags;
    c.stat = stat;
    copy(c.name, name);
    return c;
  }

  // Thread slot `slot` (0-based), instrumented, with history.
  layout::thread_record& set_thread(std::uint32_t slot, std::uint32_t class_index, std::uint64_t tid,
                                    std::uint32_t state = layout::kStateAllocated,
                                    std::uint32_t version = 1) {
    layout::thread_record& t = m_.array<layout::thread_record>(layout::kArrayThreads)[slot];
    t = layout::thread_record{};
    t.lock = lock_word(version, state);
    t.class_index = class_index;
    t.thread_id = tid;
    t.instrumented = 1;
    t.history = 1;
    return t;
  }

  // A cleared event record of array arr with an even (not being written) seqlock.
  layout::wait_record& wait_slot(layout::array_id arr, std::uint64_t slot, std::uint32_t seq = 2) {
    layout::wait_record& w = m_.array<layout::wait_record>(arr)[slot];
    w = layout::wait_record{};
    w.seq = seq;
    return w;
  }

  layout::sync_instance& set_sync(layout::array_id arr, std::uint32_t slot, std::uint32_t cls,
                                  std::uint64_t identity, layout::wait_stat stat = kNoWait,
                                  std::uint32_t version = 1) {
    layout::sync_instance& s = m_.array<layout::sync_instance>(arr)[slot];
    s = layout::sync_instance{};
    s.lock = lock_word(version, layout::kStateAllocated);
    s.class_index = cls;
    s.identity = identity;
    s.stat = stat;
    return s;
  }

  // SOURCE `index` (1-based).
  layout::source_record& set_source(std::uint32_t index, const char* text,
                                    std::uint32_t state = layout::kSourceReady, std::uint32_t line = 0) {
    layout::source_record& s = m_.array<layout::source_record>(layout::kArraySources)[index - 1];
    s.state = state;
    s.line = line;
    copy(s.text, text);
    return s;
  }

  layout::file_instance& set_file(std::uint32_t slot, std::uint32_t cls, const char* name,
                                  std::uint64_t identity, std::uint32_t open_count,
                                  layout::io_stats stats = kNoIoStats, std::uint32_t version = 1,
                                  std::uint32_t state = layout::kStateAllocated) {
    layout::file_instance& f = m_.array<layout::file_instance>(layout::kArrayFiles)[slot];
    f = layout::file_instance{};
    f.lock = lock_word(version, state);
    f.class_index = cls;
    f.open_count = open_count;
    f.identity = identity;
    f.stats = stats;
    copy(f.name, name);
    // Its row of events_waits_summary_by_instance: every io it counted.
    file_waits(slot) = star(stats);
    return f;
  }

  // A file's row of events_waits_summary_by_instance (0-based file slot).
  layout::wait_stat& file_waits(std::uint32_t slot) {
    return m_.array<layout::wait_stat>(layout::kArrayFileWaitStats)[slot];
  }

  // Thread slot `slot`'s part of events_waits_summary_global_by_event_name for class
  // `cls` (1-based).
  layout::wait_stat& thread_global(std::uint32_t slot, std::uint32_t cls) {
    return m_.array<layout::wait_stat>(
        layout::kArrayThreadGlobalStats)[std::uint64_t{slot} * m_.count(layout::kArrayClasses) + cls - 1];
  }

  // Sets thread slot `slot`'s global statistics, and every file's row by instance,
  // to what a provider with every summary consumer on would have counted for the
  // instances written so far: the synch instances, the files and the file classes'
  // buckets of deleted files.
  void count_instances_in_global(std::uint32_t slot) {
    const std::uint64_t classes = m_.count(layout::kArrayClasses);
    for (std::uint32_t c = 1; c <= classes; ++c) thread_global(slot, c) = kNoWait;
    const auto in_class = [&](std::uint32_t cls) -> layout::wait_stat* {
      return cls >= 1 && cls <= classes ? &thread_global(slot, cls) : nullptr;
    };
    for (layout::array_id id :
         {layout::kArrayMutexes, layout::kArrayRwlocks, layout::kArrayConds, layout::kArraySems}) {
      const auto* s = m_.array<layout::sync_instance>(id);
      for (std::uint64_t i = 0; i < m_.count(id); ++i)
        if ((s[i].lock & layout::kStateMask) == layout::kStateAllocated)
          if (layout::wait_stat* g = in_class(s[i].class_index)) add(*g, s[i].stat);
    }
    const auto* files = m_.array<layout::file_instance>(layout::kArrayFiles);
    for (std::uint64_t i = 0; i < m_.count(layout::kArrayFiles); ++i)
      file_waits(static_cast<std::uint32_t>(i)) = star(files[i].stats);
    for (std::uint64_t i = 0; i < m_.count(layout::kArrayFiles); ++i)
      if ((files[i].lock & layout::kStateMask) == layout::kStateAllocated &&
          kind_of(files[i].class_index) == layout::kKindFile)
        add(thread_global(slot, files[i].class_index), star(files[i].stats));
    for (std::uint32_t c = 1; c <= classes; ++c) {
      const auto& k = m_.array<layout::class_record>(layout::kArrayClasses)[c - 1];
      if (k.kind == layout::kKindFile) add(thread_global(slot, c), star(class_io(c)));
    }
  }

  std::uint8_t kind_of(std::uint32_t cls) {
    if (cls == 0 || cls > m_.count(layout::kArrayClasses)) return layout::kKindNone;
    return m_.array<layout::class_record>(layout::kArrayClasses)[cls - 1].kind;
  }

  static void add(layout::wait_stat& into, const layout::wait_stat& s) {
    if (s.count == 0) return;
    into.count = sat(into.count, s.count);
    // Sums are exact (sum_hi: the carries).
    const layout::wide_sum sum =
        layout::make_wide(into.sum, into.sum_hi) + layout::make_wide(s.sum, s.sum_hi);
    into.sum = static_cast<std::uint64_t>(sum);
    into.sum_hi = static_cast<std::uint64_t>(sum >> 64);
    if (s.min < into.min) into.min = s.min;
    if (s.max > into.max) into.max = s.max;
  }

  static std::uint64_t sat(std::uint64_t a, std::uint64_t b) { return a > kNoMin - b ? kNoMin : a + b; }

  // Read, write and misc together (COUNT_STAR ... of a file's io).
  static layout::wait_stat star(const layout::io_stats& s) {
    layout::wait_stat w = kNoWait;
    for (const layout::io_stat* g : {&s.read, &s.write, &s.misc})
      add(w, layout::wait_stat{g->count, g->sum, g->min, g->max, g->sum_hi});
    return w;
  }

  // The file io bucket of class `cls` (1-based): its destroyed files' statistics.
  layout::io_stats& class_io(std::uint32_t cls) {
    return m_.array<layout::io_stats>(layout::kArrayClassIo)[cls - 1];
  }

  // A table share, enabled and timed, no index io yet.
  layout::table_share& set_table(std::uint32_t slot, std::uint32_t cls, std::uint8_t type, const char* schema,
                                 const char* name, std::uint64_t identity, std::uint32_t version = 1,
                                 std::uint32_t state = layout::kStateAllocated) {
    layout::table_share& t = m_.array<layout::table_share>(layout::kArrayTables)[slot];
    t = layout::table_share{};
    t.lock = lock_word(version, state);
    t.class_index = cls;
    t.object_type = type;
    t.derived = layout::kFlagEnabled | layout::kFlagTimed;
    t.identity = identity;
    t.no_index = kNoTableIo;
    copy(t.schema, schema);
    copy(t.name, name);
    return t;
  }

  // Index i (0-based) of the table in `slot`; the table's index_count grows to i + 1.
  layout::index_stat& set_index(std::uint32_t slot, std::uint32_t i, const char* name,
                                layout::table_io_stat stat = kNoTableIo) {
    layout::index_stat& x = m_.array<layout::index_stat>(
        layout::kArrayTableIndexes)[slot * m_.header().max_indexes_per_table + i];
    x.stat = stat;
    copy(x.name, name);
    layout::table_share& t = m_.array<layout::table_share>(layout::kArrayTables)[slot];
    if (t.index_count < i + 1) t.index_count = i + 1;
    return x;
  }

  layout::object_record& set_object(std::uint32_t slot, const char* schema, const char* name, bool enabled,
                                    bool timed, std::uint8_t type = layout::kSetupObjectTable,
                                    std::uint32_t state = layout::kStateAllocated,
                                    std::uint32_t version = 1) {
    layout::object_record& o = m_.array<layout::object_record>(layout::kArraySetupObjects)[slot];
    o = layout::object_record{};
    o.lock = lock_word(version, state);
    o.object_type = type;
    o.enabled = enabled ? 1 : 0;
    o.timed = timed ? 1 : 0;
    copy(o.schema, schema);
    copy(o.name, name);
    return o;
  }

  layout::actor_record& set_actor(std::uint32_t slot, const char* host, const char* user, const char* role,
                                  bool enabled, bool history, std::uint32_t state = layout::kStateAllocated,
                                  std::uint32_t version = 1) {
    layout::actor_record& a = m_.array<layout::actor_record>(layout::kArraySetupActors)[slot];
    a = layout::actor_record{};
    a.lock = lock_word(version, state);
    a.enabled = enabled ? 1 : 0;
    a.history = history ? 1 : 0;
    copy(a.host, host);
    copy(a.user, user);
    copy(a.role, role);
    return a;
  }

  // Fixed-size text fields, cut to fit with their NUL.
  template <std::size_t N>
  static void copy(char (&field)[N], const char* text) {
    std::snprintf(field, N, "%s", text);
  }

 private:
  region_map& m_;
};

}  // namespace pfs

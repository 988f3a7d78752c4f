// Row builders of the events_waits_current, _history and _history_long.
#include "agent/reader/internal/reader_internal.h"

namespace pfs::reader::detail {

namespace {

constexpr std::size_t kWaitColumns = 22;  // wait_columns() in tables.cpp

// Groups of wait columns (bit k: column k of wait_columns()), so that a row of few
// columns (or none, as for count(*)) does not look at all 22 flags (perf had that
// at 15% of a count(*)).
constexpr std::uint64_t kHead = 0x1f, kTimes = 0xe0, kSpins = 0x100, kObject = 0x1e00, kDetail = 0x7e000,
                        kBlocking = 0x380000;

// Where wait_rows::cells writes: the row builder's cells, by reader column (the
// others keep whatever they held: nobody reads them)...
struct slot_output {
  cell* o;
  const bool* wanted;
  std::uint64_t mask;
  bool wants(std::size_t k) const { return wanted[k]; }
  void put(std::size_t k, const cell& v) { o[k] = v; }
  void put_text(std::size_t k, const cell& v) { o[k] = v; }
  void put_name(std::size_t k, std::uint32_t, std::string_view name) { o[k] = stable_text(name); }
};

// ... or a packed row, at each column's output position: ints as they are, text
// copied into the row's text.
struct packed_output {
  packed_rows& rows;
  packed_cell* cells;
  const int* position;
  std::uint64_t mask;
  bool wants(std::size_t k) const { return (mask >> k & 1) != 0; }
  void put(std::size_t k, const cell& v) { cells[position[k]] = packed_cell{v.i, 0, v.null}; }
  void put_text(std::size_t k, const cell& v) {
    cells[position[k]] = v.null ? packed_cell{} : rows.text_cell(v.s);
  }
  // An instrument's name: one block per class shared by its rows (name_at: the
  // block's offset by class index, -1 before the class's first row). The shim only
  // writes the same varlena header there.
  void put_name(std::size_t k, std::uint32_t class_index, std::string_view name) {
    std::int64_t& at = name_at[class_index];
    if (at < 0) at = rows.text_cell(name).value;
    cells[position[k]] = packed_cell{at, static_cast<std::uint32_t>(name.size()), false};
  }
  std::int64_t* name_at;
};

struct wait_times {
  std::uint64_t start = 0, end = 0;
  int known = 0;  // 0: all NULL; 1: the start only; 3: all three
  cell start_cell() const { return known >= 1 ? int_cell(start) : null_cell(); }
  cell end_cell() const { return known == 3 ? int_cell(end) : null_cell(); }
  cell wait_cell() const { return known == 3 ? int_cell(end >= start ? end - start : 0) : null_cell(); }
};

// A wait's times in picoseconds: none when its timer is unknown, only the start for
// a running wait of THREAD_CPU (per thread: "now" means nothing here), else all
// three (a running wait ends "now", read in this process).
// A unit of work read on the wait timer's clock is shown in whole units of its
// row's timer (event_unit): the start rounded down, the end up.
[[gnu::always_inline]] inline wait_times times_of(const scan_state& s, const wait_copy& c) {
  const std::uint8_t clock = event_clock(c.timer);
  const converter* conv = clock >= 1 && clock < timers::timer_kind_count ? &s.converters[clock] : nullptr;
  wait_times t;
  if (conv == nullptr || conv->mult == 0) return t;
  t.start = to_pico(*conv, c.timer_start);
  t.known = 1;
  const std::uint64_t unit = unit_ps(event_unit(c.timer));
  if (unit > 1) t.start -= t.start % unit;
  if (c.state == kWaitRunning) {
    const auto kind = static_cast<timers::timer_kind>(clock);
    if (kind == timers::timer_kind::thread_cpu) return t;
    t.end = to_pico(*conv, timers::read(kind));
  } else {
    t.end = to_pico(*conv, c.timer_end);
  }
  if (unit > 1 && t.end % unit != 0)
    t.end = t.end > ~std::uint64_t{0} - unit ? t.end : t.end + (unit - t.end % unit);
  t.known = 3;
  return t;
}

// timer_start, timer_end, timer_wait.
void append_times(const scan_state& s, row_builder& x, const wait_copy& c) {
  const wait_times t = times_of(s, c);
  x.push_back(t.start_cell());
  x.push_back(t.end_cell());
  x.push_back(t.wait_cell());
}

// blocking_thread_id, blocking_event_id (lock waits), signalling_thread_id
// (condition waits) into cells[0..2].
void blocking_cells(const wait_copy& c, cell* cells) {
  cells[0] = null_cell();
  cells[1] = null_cell();
  cells[2] = null_cell();
  if (c.operation == kOpWait || c.operation == kOpTimedWait) {
    cells[2] = nullable_int(c.blocking_thread_id);
  } else if (c.blocking_thread_id != 0) {
    cells[0] = int_cell(c.blocking_thread_id);
    cells[1] = nullable_int(c.blocking_event_id);
  }
}

// The rows of one scan of a wait table: what the wait builders keep besides the
// scan state (where rows go, the objects of the waits, looked up once per scan).
class wait_rows {
 public:
  // Loads the classes and timers and chooses where rows go.
  explicit wait_rows(scan_state& s);
  // The row of a copied wait, if its class is valid and the sink's filter may want it.
  void emit(const wait_copy& c);

 private:
  template <class Output>
  void cells(const wait_copy& c, const class_entry& cls, Output& o);
  void emit_all(row_builder& x, const class_entry& k, const wait_copy& c);
  std::uint64_t wanted_mask();
  void append_object(row_builder& x, const wait_copy& c);
  const std::optional<std::string>& file_name_of(std::uint32_t index, std::uint32_t version);
  const std::optional<std::string>& socket_name_of(std::uint32_t index, std::uint32_t version);
  struct table_ref {
    const char* type = nullptr;
    std::string schema, name;
    std::vector<std::string> indexes;
  };
  const table_ref* table_of(std::uint32_t index, std::uint32_t version);
  struct metadata_ref {
    std::string type, schema, name;
  };
  const std::optional<metadata_ref>& metadata_of(std::uint32_t index, std::uint32_t version);

  scan_state& s_;
  packed_rows* packed_ = nullptr;            // where rows go, when not through the sink's row()
  std::uint64_t packed_mask_ = 0;            // bit k: wait column k has an output position
  std::vector<std::int64_t> class_name_at_;  // packed: the block of a class's name, by class index
  std::uint64_t wanted_ = 0;
  bool wanted_ready_ = false;
  row_builder objects_;  // object_schema, object_name, index_name, object_type of one wait
  // Objects of wait events by (index << 32 | version), looked up once per scan.
  std::unordered_map<std::uint64_t, std::optional<std::string>> file_refs_;
  std::unordered_map<std::uint64_t, std::optional<std::string>> socket_refs_;
  std::unordered_map<std::uint64_t, std::optional<table_ref>> table_refs_;
  std::unordered_map<std::uint64_t, std::optional<metadata_ref>> metadata_refs_;
};

// Wait rows go straight into the sink's packed rows when it offers them and its
// filter tests only the head (thread_id, event_id, event_name), which head_rejected
// tests exactly before a row is built (those columns are never NULL): no built row
// is then tested again.
wait_rows::wait_rows(scan_state& s) : s_(s) {
  // (the classes the waits name are copied as they come: class_on_demand)
  s.load_timers();
  packed_rows* p = s.out.packed;
  if (p == nullptr || p->table_columns() != kWaitColumns) return;
  if (s.out.filter != nullptr && !s.out.filter->tests_only(scan_state::kHeadColumns)) return;
  packed_ = p;
  // The piece is not cleared while this scan writes into it, and a block keeps
  // its offset when the text buffer grows.
  class_name_at_.assign(s.r.classes + 1, -1);
  packed_mask_ = 0;
  for (std::size_t k = 0; k < kWaitColumns; ++k)
    if (p->position(k) >= 0) packed_mask_ |= std::uint64_t{1} << k;
}

void wait_rows::emit(const wait_copy& c) {
  const class_entry* cls = s_.class_on_demand(c.class_index);
  if (cls == nullptr) {
    ++s_.invalid;
    return;
  }
  if (s_.head_rejected(c.thread_id, c.event_id, cls->name)) return;
  if (packed_ != nullptr) {  // the head was the whole filter: the row passes
    s_.head_check_used();
    packed_output o{*packed_, packed_->begin_row(), packed_->positions(), packed_mask_,
                    class_name_at_.data()};
    cells(c, *cls, o);
    return;
  }
  auto& x = s_.add_row();
  const bool* w = s_.out.wanted;
  if (w == nullptr) {
    emit_all(x, *cls, c);
    return;
  }
  if (x.slots.size() < kWaitColumns) x.slots.resize(kWaitColumns);
  x.n = kWaitColumns;
  slot_output o{x.slots.data(), w, wanted_mask()};
  cells(c, *cls, o);
}

// The wanted columns of wait_columns() (22, in that order) of one wait, each
// written once (NULL included).
template <class Output>
void wait_rows::cells(const wait_copy& c, const class_entry& cls, Output& o) {
  const std::uint64_t m = o.mask;
  if ((m & kHead) != 0) {
    if (o.wants(0)) o.put(0, int_cell(c.thread_id));
    if (o.wants(1)) o.put(1, int_cell(c.event_id));
    if (o.wants(2)) o.put(2, nullable_int(c.end_event_id));
    if (o.wants(3)) o.put_name(3, c.class_index, std::string_view(cls.name));
    if (o.wants(4)) {
      const std::string* src = s_.source_ref(c.source_index);
      o.put_text(4, src != nullptr ? stable_text(std::string_view(*src)) : null_cell());
    }
  }
  if ((m & kTimes) != 0) {
    const wait_times t = times_of(s_, c);
    if (o.wants(5)) o.put(5, t.start_cell());
    if (o.wants(6)) o.put(6, t.end_cell());
    if (o.wants(7)) o.put(7, t.wait_cell());
  }
  if ((m & kSpins) != 0) o.put(8, null_cell());  // SPINS: not counted
  if ((m & kObject) != 0) {
    row_builder& t = objects_;
    t.n = 0;
    append_object(t, c);
    for (std::size_t k = 0; k < 4; ++k)
      if (o.wants(9 + k)) o.put_text(9 + k, t.slots[k]);
  }
  if ((m & kDetail) != 0) {
    if (o.wants(13)) o.put(13, int_cell(c.object_instance_begin));
    if (o.wants(14)) o.put(14, nullable_int(c.nesting_event_id));
    if (o.wants(15)) {
      const char* nest = c.nesting_event_id != 0 ? nesting_type_name(c.nesting_type) : nullptr;
      o.put_text(15, nest != nullptr ? stable_text(std::string_view(nest)) : null_cell());
    }
    if (o.wants(16)) {
      const char* op = operation_name(c.operation);
      o.put_text(16, op != nullptr ? stable_text(std::string_view(op)) : null_cell());
    }
    // -1 = NULL; other negative values are garbage, NULL too.
    if (o.wants(17)) o.put(17, c.number_of_bytes >= 0 ? int_cell_signed(c.number_of_bytes) : null_cell());
    if (o.wants(18)) o.put(18, int_cell(c.flags));
  }
  if ((m & kBlocking) != 0) {
    cell b[3];
    blocking_cells(c, b);
    for (std::size_t k = 0; k < 3; ++k)
      if (o.wants(19 + k)) o.put(19 + k, b[k]);
  }
}

// Bit k: the sink wants wait column k (built once per scan).
std::uint64_t wait_rows::wanted_mask() {
  static_assert(kWaitColumns <= 64);
  if (!wanted_ready_) {
    wanted_ready_ = true;
    for (std::size_t k = 0; k < kWaitColumns; ++k)
      if (s_.out.wanted[k]) wanted_ |= std::uint64_t{1} << k;
  }
  return wanted_;
}

void wait_rows::emit_all(row_builder& x, const class_entry& k, const wait_copy& c) {
  const class_entry* cls = &k;
  x.reserve(19);
  x.push_back(int_cell(c.thread_id));
  x.push_back(int_cell(c.event_id));
  x.push_back(nullable_int(c.end_event_id));
  x.push_back(stable_text(std::string_view(cls->name)));
  const std::string* src = s_.source_ref(c.source_index);
  x.push_back(src != nullptr ? stable_text(std::string_view(*src)) : null_cell());
  append_times(s_, x, c);
  x.push_back(null_cell());  // spins
  append_object(x, c);
  x.push_back(int_cell(c.object_instance_begin));
  x.push_back(nullable_int(c.nesting_event_id));
  const char* nest = c.nesting_event_id != 0 ? nesting_type_name(c.nesting_type) : nullptr;
  x.push_back(nest != nullptr ? stable_text(std::string_view(nest)) : null_cell());
  const char* op = operation_name(c.operation);
  x.push_back(op != nullptr ? stable_text(std::string_view(op)) : null_cell());
  // -1 = NULL; other negative values are garbage, NULL too.
  x.push_back(c.number_of_bytes < 0 ? null_cell() : int_cell_signed(c.number_of_bytes));
  x.push_back(int_cell(c.flags));
  cell blocking[3];
  blocking_cells(c, blocking);
  for (const cell& v : blocking) x.push_back(v);
}

// object_schema, object_name, index_name, object_type.
void wait_rows::append_object(row_builder& x, const wait_copy& c) {
  if (c.object_kind == kObjectFile) {
    const std::optional<std::string>& name = file_name_of(c.object_index, c.object_version);
    x.push_back(null_cell());
    x.push_back(name ? s_.text_cell(std::string_view(*name)) : null_cell());
    x.push_back(null_cell());
    x.push_back(s_.text_cell(std::string_view("FILE")));
    return;
  }
  if (c.object_kind == kObjectSocket) {  // MySQL: OBJECT_NAME 'ip:port', OBJECT_TYPE 'SOCKET'
    const std::optional<std::string>& name = socket_name_of(c.object_index, c.object_version);
    x.push_back(null_cell());
    x.push_back(name ? s_.text_cell(std::string_view(*name)) : null_cell());
    x.push_back(null_cell());
    x.push_back(s_.text_cell(std::string_view("SOCKET")));
    return;
  }
  if (c.object_kind == kObjectTable) {
    if (const table_ref* t = table_of(c.object_index, c.object_version)) {
      x.push_back(s_.text_cell(std::string_view(t->schema)));
      x.push_back(s_.text_cell(std::string_view(t->name)));
      x.push_back(c.index_number >= 1 && c.index_number <= t->indexes.size()
                      ? s_.text_cell(std::string_view(t->indexes[c.index_number - 1]))
                      : null_cell());
      x.push_back(s_.text_cell(std::string_view(t->type)));
      return;
    }
  }
  if (c.object_kind == kObjectMetadata) {  // MySQL: the lock's key; no INDEX_NAME
    if (const std::optional<metadata_ref>& m = metadata_of(c.object_index, c.object_version)) {
      x.push_back(m->schema.empty() ? null_cell() : s_.text_cell(std::string_view(m->schema)));
      x.push_back(m->name.empty() ? null_cell() : s_.text_cell(std::string_view(m->name)));
      x.push_back(null_cell());
      x.push_back(s_.text_cell(std::string_view(m->type)));
      return;
    }
  }
  if (c.object_kind == kObjectNone) {  // a semaphore wait: OBJECT_TYPE 'SEMAPHORE' (beyond MySQL)
    const class_entry* cls = s_.class_on_demand(c.class_index);
    if (cls != nullptr && cls->kind == kKindSem) {
      for (int k = 0; k < 3; ++k) x.push_back(null_cell());
      x.push_back(s_.text_cell(std::string_view("SEMAPHORE")));
      return;
    }
  }
  for (int k = 0; k < 4; ++k) x.push_back(null_cell());  // no object, or one that is gone
}

// The key of the metadata lock a wait names, if its record still has the event's
// version (released but not yet reused counts: MySQL's version check).
const std::optional<wait_rows::metadata_ref>& wait_rows::metadata_of(std::uint32_t index,
                                                                     std::uint32_t version) {
  static const std::optional<metadata_ref> none;
  if (index == 0 || index > s_.r.count(kArrayMetadataLocks)) return none;
  const std::uint64_t key = (std::uint64_t{index} << 32) | version;
  auto it = metadata_refs_.find(key);
  if (it == metadata_refs_.end()) {
    metadata_lock_copy m;
    const bool ok = read_referenced(*s_.r.at<metadata_lock_record>(kArrayMetadataLocks, index - 1), version,
                                    [&m](const metadata_lock_record& r) { copy_metadata_lock(r, m); }) &&
                    !m.object_type.str().empty();
    it = metadata_refs_
             .emplace(key, ok ? std::optional<metadata_ref>(
                                    metadata_ref{m.object_type.str(), m.schema.str(), m.name.str()})
                              : std::nullopt)
             .first;
  }
  return it->second;
}

// The name of the file a wait names, if its record still has the event's version.
const std::optional<std::string>& wait_rows::file_name_of(std::uint32_t index, std::uint32_t version) {
  static const std::optional<std::string> none;
  if (index == 0 || index > s_.r.count(kArrayFiles)) return none;
  const std::uint64_t key = (std::uint64_t{index} << 32) | version;
  auto it = file_refs_.find(key);
  if (it == file_refs_.end()) {
    fixed_str<kObjectNameLen> name;
    bool name_ok = false;
    const bool ok = read_referenced(*s_.r.at<file_instance>(kArrayFiles, index - 1), version,
                                    [&](const file_instance& f) { name_ok = load_file_name(f, name); }) &&
                    name_ok;
    it = file_refs_.emplace(key, ok ? std::optional<std::string>(name.str()) : std::nullopt).first;
  }
  return it->second;
}

// 'ip:port' of the socket a wait names (MySQL's OBJECT_NAME), if its record still
// has the event's version.
const std::optional<std::string>& wait_rows::socket_name_of(std::uint32_t index, std::uint32_t version) {
  static const std::optional<std::string> none;
  if (index == 0 || index > s_.r.count(kArraySockets)) return none;
  const std::uint64_t key = (std::uint64_t{index} << 32) | version;
  auto it = socket_refs_.find(key);
  if (it == socket_refs_.end()) {
    fixed_str<kSocketIpLen> ip;
    std::uint32_t port = 0;
    bool address_ok = false;
    const bool ok =
        read_referenced(*s_.r.at<socket_instance>(kArraySockets, index - 1), version,
                        [&](const socket_instance& k) { address_ok = load_socket_address(k, ip, port); }) &&
        address_ok;
    it = socket_refs_
             .emplace(key, ok ? std::optional<std::string>(std::string(ip.str()) + ":" + std::to_string(port))
                              : std::nullopt)
             .first;
  }
  return it->second;
}

// The table share a wait names, if it still has the event's version; nullptr if not.
const wait_rows::table_ref* wait_rows::table_of(std::uint32_t index, std::uint32_t version) {
  if (index == 0 || index > s_.r.count(kArrayTables)) return nullptr;
  const std::uint64_t key = (std::uint64_t{index} << 32) | version;
  auto it = table_refs_.find(key);
  if (it == table_refs_.end()) {
    std::optional<table_ref> ref;
    table_copy t;
    if (read_referenced(
            *s_.r.at<table_share>(kArrayTables, index - 1), version,
            [this, index, &t](const table_share& sh) { copy_table(s_.r, index - 1, sh, t, false); })) {
      if (const char* type = object_type_name(t.object_type)) {
        ref.emplace();
        ref->type = type;
        ref->schema = t.schema.str();
        ref->name = t.name.str();
        for (const index_copy& ix : t.indexes) ref->indexes.push_back(ix.name.str());
      }
    }
    it = table_refs_.emplace(key, std::move(ref)).first;
  }
  return it->second ? &*it->second : nullptr;
}

// events_waits_current or events_waits_history: per allocated thread, its slots, all
// copied while the thread's lock word stays the same (so a thread slot reused
// meanwhile does not mix two threads' rows).
void waits_per_thread(scan_state& s, bool history) {
  wait_rows waits(s);
  const region_reader::impl& r = s.r;
  const std::uint64_t per = history ? r.history_per_thread : r.stack_depth;
  const array_id arr = history ? kArrayWaitHistory : kArrayWaitStacks;
  std::vector<wait_copy> rows;
  rows.reserve(per);
  for (std::uint64_t i = 0, n = r.used_threads(); i < n; ++i) {
    const thread_record& tr = *r.at<thread_record>(kArrayThreads, i);
    std::uint64_t slot_torn = 0;
    // The thread's slots, copied while its record stays the same thread.
    const rd thread_res = read_versioned(tr, [&](const thread_record& t) {
      const std::uint64_t tid = load_relaxed(t.thread_id);
      const std::uint64_t next = load_relaxed(t.history_index);
      // TRUNCATE: this thread's events below its horizon are gone.
      const std::uint64_t horizon = load_acquire(t.horizon[history ? kTruncateHistory : kTruncateCurrent]);
      rows.clear();
      slot_torn = 0;
      // History: oldest first (the next slot to be written holds the oldest event
      // once the ring has wrapped).
      const std::uint64_t start = history && per != 0 && next >= per ? next % per : 0;
      for (std::uint64_t k = 0; k < per; ++k) {
        const std::uint64_t slot = i * per + (start + k) % per;
        const wait_record* w = r.at<wait_record>(arr, slot);
        if (w == nullptr) break;  // cannot happen: the geometry was checked
        wait_copy c;
        const rd res = read_wait(*w, c);
        if (res == rd::torn) {
          ++slot_torn;
          continue;
        }
        if (c.thread_id != tid || c.event_id < horizon) continue;
        if (history ? c.state != kWaitCompleted : (c.state != kWaitRunning && c.state != kWaitCompleted))
          continue;
        rows.push_back(c);
      }
    });
    if (!s.accept(thread_res)) continue;
    s.torn += slot_torn;
    for (const wait_copy& c : rows) waits.emit(c);
  }
}

// How far ahead of the record it reads the history_long scan asks for memory: the
// hardware's own prefetch stops at each 4 KiB page, and a scan that drops most
// records waits for memory at almost every one (perf: half of a scan no row passes).
constexpr std::uint64_t kPrefetchRecords = 32;

void waits_history_long(scan_state& s) {
  wait_rows waits(s);
  const region_reader::impl& r = s.r;
  // TRUNCATE horizons: a live thread hides its events below its own horizon; a
  // thread that is gone hides all of them if it existed at the last TRUNCATE.
  std::unordered_map<std::uint64_t, std::uint64_t> live_horizon;
  for (std::uint64_t i = 0, n = r.used_threads(); i < n; ++i) {
    const thread_record& tr = *r.at<thread_record>(kArrayThreads, i);
    std::uint64_t tid = 0, horizon = 0;
    const rd res = read_versioned(tr, [&](const thread_record& t) {
      tid = load_relaxed(t.thread_id);
      horizon = load_relaxed(t.horizon[kTruncateHistoryLong]);
    });
    if (res == rd::ok) live_horizon[tid] = horizon;
  }
  const std::uint64_t gone_below = load_acquire(r.header().horizon_thread_id[kTruncateHistoryLong]);
  // Slots come in per-thread batches: remember the last thread's horizon.
  std::uint64_t last_tid = 0, last_horizon = 0;
  bool last_live = false;
  const bool prefilter = s.prefilters();
  // One copy for the whole scan: read_wait fills every field of a record it returns
  // ok, and a fresh (zeroed) copy per record cost 12% of a count(*) (perf).
  wait_copy c;
  const std::uint64_t n = r.count(kArrayHistoryLong);
  for (std::uint64_t i = s.start_position(); i < n; ++i) {
    if (s.pause_before(i, sizeof(wait_record))) return;
    const wait_record& w = *r.at<wait_record>(kArrayHistoryLong, i);
    if (i + kPrefetchRecords < n) __builtin_prefetch(&w + kPrefetchRecords);
    // Most records fail a test on the thread, event or instrument: look at those
    // fields before copying the record.
    if (prefilter &&
        s.head_prefiltered(load_relaxed(w.thread_id), load_relaxed(w.event_id), load_relaxed(w.class_index)))
      continue;
    if (!s.accept(read_wait(w, c))) continue;
    if (c.state != kWaitCompleted) continue;
    if (c.thread_id != last_tid || i == s.start_position()) {
      const auto live = live_horizon.find(c.thread_id);
      last_tid = c.thread_id;
      last_live = live != live_horizon.end();
      last_horizon = last_live ? live->second : 0;
    }
    if (last_live ? c.event_id < last_horizon : c.thread_id < gone_below) continue;
    waits.emit(c);
  }
}

}  // namespace

void rows_waits(scan_state& s, history_kind which) {
  if (which == history_kind::history_long)
    waits_history_long(s);
  else
    waits_per_thread(s, which == history_kind::history);
}

// timer_start, timer_end, timer_wait of any event (running: end = now).
void append_event_times(const scan_state& s, row_builder& x, std::uint8_t timer, bool running,
                        std::uint64_t start, std::uint64_t end) {
  wait_copy c;
  c.timer = timer;
  c.state = running ? kWaitRunning : kWaitCompleted;
  c.timer_start = start;
  c.timer_end = end;
  append_times(s, x, c);
}

bool scan_state::class_prefiltered(std::uint32_t class_index) {
  const row_filter& f = *out.filter;
  if (class_verdict_.size() != r.classes + 1) class_verdict_.assign(r.classes + 1, -1);
  if (class_index >= class_verdict_.size()) return false;  // invalid: the copy counts it
  std::int8_t& v = class_verdict_[class_index];
  if (v < 0) {
    const class_entry* cls = class_on_demand(class_index);
    v = cls == nullptr || f.may_match_text(3, cls->name) ? 1 : 0;
  }
  return v == 0;
}

void scan_state::load_timers() {
  for (int k = 0; k < timers::timer_kind_count; ++k) {
    const auto& d = h.timers[k];
    converter& c = converters[k];
    c.base = load_relaxed(d.base);
    c.mult = load_relaxed(d.mult);
    c.shift = load_relaxed(d.shift);
    if (c.shift > 127) c.mult = 0;  // garbage: a shift this large is undefined
    c.epoch_count = 0;
    c.epochs = nullptr;
  }
  converter& cycle = converters[static_cast<int>(timers::timer_kind::cycle)];
  if (cycle.mult != 0) {
    cycle.epoch_count = load_cycle_epochs(h, cycle_epochs_);
    cycle.epochs = cycle_epochs_;
  }
}

// SOURCE text of a 1-based source index, looked up once per scan; nullptr when unknown.
const std::string* scan_state::source_ref(std::uint32_t index) {
  if (index == 0 || index > r.count(kArraySources)) return nullptr;
  for (std::size_t k = 0; k < first_sources_count_; ++k)
    if (first_sources_[k].first == index) return first_sources_[k].second;
  if (first_sources_count_ == first_sources_.size()) {
    auto it = sources_.find(index);
    if (it == sources_.end()) it = sources_.emplace(index, read_source(index)).first;
    return it->second;
  }
  const std::string* text = read_source(index);
  first_sources_[first_sources_count_++] = {index, text};
  return text;
}

// The reader's text of source slot index (1-based), read from the region the first
// time it is ready; nullptr while it is not (for the rest of the scan).
const std::string* scan_state::read_source(std::uint32_t index) {
  std::lock_guard<std::mutex> guard(r.class_names_mutex);
  if (r.source_texts.size() < r.count(kArraySources))
    r.source_texts.resize(r.count(kArraySources));  // once: its strings never move after
  auto& [ready, text] = r.source_texts[index - 1];
  if (!ready) {
    const source_record& src = *r.at<source_record>(kArraySources, index - 1);
    const std::uint32_t st = load_acquire(src.state);
    if (st != kSourceReady) return nullptr;
    fixed_str<kSourceLen> f;
    f.load(src.text);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (load_relaxed(src.state) != st) return nullptr;
    text = f.str();
    ready = true;
  }
  return &text;
}

}  // namespace pfs::reader::detail

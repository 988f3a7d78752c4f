// data_locks and data_lock_waits (MySQL 8.0): the program's lock manager's locks
// while they exist, and which lock waits for which. MySQL asks the engines at
// query time (psi_data_lock.h); here the program wrote them (agent_data_locks.cpp).
// A wait is shown when both its locks still are the records it named (allocated,
// same version); a wait whose lock was freed or reused is not a row.
#include "agent/reader/internal/reader_internal.h"
#include "agent/region/lock_layout.h"

namespace pfs::reader::detail {
namespace {

struct data_lock_copy {
  std::uint64_t transaction_id = 0;
  std::uint64_t thread_id = 0;
  std::uint64_t event_id = 0;
  std::uint64_t identity = 0;
  fixed_str<kDataLockEngineLen> engine;
  fixed_str<kDataLockIdLen> engine_lock_id;
  fixed_str<kDataLockNameLen> object_schema;
  fixed_str<kDataLockNameLen> object_name;
  fixed_str<kDataLockNameLen> partition_name;
  fixed_str<kDataLockNameLen> subpartition_name;
  fixed_str<kDataLockNameLen> index_name;
  fixed_str<kDataLockWordLen> lock_type;
  fixed_str<kDataLockWordLen> lock_mode;
  fixed_str<kDataLockWordLen> lock_status;
  fixed_str<kDataLockDataLen> lock_data;
  bool status_ok = false;
};

// LOCK_STATUS, rewritten under the record's seq while it stays allocated.
bool load_status(const data_lock_record& r, fixed_str<kDataLockWordLen>& status) {
  for (int a = 0; a < 4; ++a) {
    const std::uint32_t s1 = load_acquire(r.seq);
    if ((s1 & 1u) == 0) {
      status.load(r.lock_status);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (load_relaxed(r.seq) == s1) return true;
    }
    cpu_relax();
  }
  return false;
}

rd read_data_lock(const data_lock_record& r, data_lock_copy& c, std::uint32_t* word) {
  const rd result = read_versioned(
      r,
      [&c](const data_lock_record& d) {
        c.transaction_id = load_relaxed(d.transaction_id);
        c.thread_id = load_relaxed(d.thread_id);
        c.event_id = load_relaxed(d.event_id);
        c.identity = load_relaxed(d.identity);
        c.engine.load(d.engine);
        c.engine_lock_id.load(d.engine_lock_id);
        c.object_schema.load(d.object_schema);
        c.object_name.load(d.object_name);
        c.partition_name.load(d.partition_name);
        c.subpartition_name.load(d.subpartition_name);
        c.index_name.load(d.index_name);
        c.lock_type.load(d.lock_type);
        c.lock_mode.load(d.lock_mode);
        c.status_ok = load_status(d, c.lock_status);
        c.lock_data.load(d.lock_data);
      },
      word);
  return result == rd::ok && !c.status_ok ? rd::torn : result;
}

template <std::size_t N>
cell nullable_text(scan_state& s, const fixed_str<N>& f) {
  return f.empty() ? null_cell() : s.text_cell(f.str());
}

// A data_lock_record named by a wait (1-based index and version): its copy, if it
// still is that lock.
bool named_lock(scan_state& s, std::uint32_t index, std::uint32_t version, data_lock_copy& c) {
  if (index == 0 || index > s.r.count(kArrayDataLocks)) {
    ++s.invalid;
    return false;
  }
  std::uint32_t word = 0;
  if (!s.accept(read_data_lock(*s.r.at<data_lock_record>(kArrayDataLocks, index - 1), c, &word)))
    return false;
  return (word & ~kStateMask) == version;
}

// ENGINE_LOCK_ID ... OBJECT_INSTANCE_BEGIN of one side of a wait (5 columns).
void append_side(scan_state& s, row_builder& x, const data_lock_copy& c) {
  x.push_back(s.text_cell(c.engine_lock_id.str()));
  x.push_back(nullable_int(c.transaction_id));
  x.push_back(nullable_int(c.thread_id));
  x.push_back(nullable_int(c.event_id));
  x.push_back(int_cell(c.identity));
}

}  // namespace

void rows_data_locks(scan_state& s) {
  for (std::uint64_t i = 0; i < s.r.count(kArrayDataLocks); ++i) {
    data_lock_copy c;
    if (!s.accept(read_data_lock(*s.r.at<data_lock_record>(kArrayDataLocks, i), c, nullptr))) continue;
    auto& x = s.add_row();
    x.push_back(s.text_cell(c.engine.str()));
    x.push_back(s.text_cell(c.engine_lock_id.str()));
    x.push_back(nullable_int(c.transaction_id));
    x.push_back(nullable_int(c.thread_id));
    x.push_back(nullable_int(c.event_id));
    x.push_back(nullable_text(s, c.object_schema));
    x.push_back(nullable_text(s, c.object_name));
    x.push_back(nullable_text(s, c.partition_name));
    x.push_back(nullable_text(s, c.subpartition_name));
    x.push_back(nullable_text(s, c.index_name));
    x.push_back(int_cell(c.identity));
    x.push_back(s.text_cell(c.lock_type.str()));
    x.push_back(s.text_cell(c.lock_mode.str()));
    x.push_back(s.text_cell(c.lock_status.str()));
    x.push_back(nullable_text(s, c.lock_data));
  }
}

void rows_data_lock_waits(scan_state& s) {
  for (std::uint64_t i = 0; i < s.r.count(kArrayDataLockWaits); ++i) {
    data_lock_wait_record w{};
    const rd res = read_versioned(*s.r.at<data_lock_wait_record>(kArrayDataLockWaits, i),
                                  [&w](const data_lock_wait_record& r) {
                                    w.requesting_index = load_relaxed(r.requesting_index);
                                    w.requesting_version = load_relaxed(r.requesting_version);
                                    w.blocking_index = load_relaxed(r.blocking_index);
                                    w.blocking_version = load_relaxed(r.blocking_version);
                                  });
    if (!s.accept(res)) continue;
    data_lock_copy requesting;
    data_lock_copy blocking;
    if (!named_lock(s, w.requesting_index, w.requesting_version, requesting) ||
        !named_lock(s, w.blocking_index, w.blocking_version, blocking))
      continue;
    auto& x = s.add_row();
    x.push_back(s.text_cell(requesting.engine.str()));
    append_side(s, x, requesting);
    append_side(s, x, blocking);
  }
}

}  // namespace pfs::reader::detail

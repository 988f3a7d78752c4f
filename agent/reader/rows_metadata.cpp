// metadata_locks (MySQL 8.0's table_mdl.cc): one row per metadata lock the program
// requested and has not released, with its type, duration and status and who
// requested it. Also the object columns of a metadata lock wait (rows_waits.cpp).
#include "agent/reader/internal/reader_internal.h"

namespace pfs::reader::detail {

// Inside a read_versioned / read_referenced copy: the lock word is checked around it.
void copy_metadata_lock(const metadata_lock_record& r, metadata_lock_copy& c) {
  c.lock_type = load_relaxed(r.lock_type);
  c.duration = load_relaxed(r.duration);
  c.status = load_relaxed(r.status);
  c.identity = load_relaxed(r.identity);
  c.owner_thread_id = load_relaxed(r.owner_thread_id);
  c.owner_event_id = load_relaxed(r.owner_event_id);
  c.source_index = load_relaxed(r.source_index);
  c.object_type.load(r.object_type);
  c.schema.load(r.object_schema);
  c.name.load(r.object_name);
  c.column.load(r.column_name);
}

namespace {

cell text_or_null(scan_state& s, std::string_view v) { return v.empty() ? null_cell() : s.text_cell(v); }

}  // namespace

void rows_metadata_locks(scan_state& s) {
  metadata_lock_copy c;
  for (std::uint64_t i = 0; i < s.r.count(kArrayMetadataLocks); ++i) {
    const metadata_lock_record& rec = *s.r.at<metadata_lock_record>(kArrayMetadataLocks, i);
    if (!s.accept(read_versioned(rec, [&c](const metadata_lock_record& r) { copy_metadata_lock(r, c); })))
      continue;
    const char* type = mdl_type_name(c.lock_type);
    const char* duration = mdl_duration_name(c.duration);
    const char* status = mdl_status_name(c.status);
    if (type == nullptr || duration == nullptr || status == nullptr || c.object_type.str().empty()) {
      ++s.invalid;  // a damaged record
      continue;
    }
    auto& x = s.add_row();
    x.push_back(s.text_cell(c.object_type.str()));
    x.push_back(text_or_null(s, c.schema.str()));
    x.push_back(text_or_null(s, c.name.str()));
    x.push_back(text_or_null(s, c.column.str()));
    x.push_back(int_cell(c.identity));
    x.push_back(stable_text(std::string_view(type)));
    x.push_back(stable_text(std::string_view(duration)));
    x.push_back(stable_text(std::string_view(status)));
    const std::string* src = s.source_ref(c.source_index);
    x.push_back(src != nullptr ? s.text_cell(std::string_view(*src)) : null_cell());
    x.push_back(nullable_int(c.owner_thread_id));
    x.push_back(nullable_int(c.owner_event_id));
  }
}

}  // namespace pfs::reader::detail

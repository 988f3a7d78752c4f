// events_errors_summary_global_by_error and events_errors_summary_by_thread_by_error
// (MySQL 8.0): per declared error, and per live thread and error, the errors
// raised and handled and when they were first and last seen. The first row of
// each (per thread: of each thread) is the NULL row, errors reported without being
// declared, as MySQL's row for errors outside its list.
#include "agent/reader/internal/holder_rows.h"
#include "agent/reader/internal/reader_internal.h"

namespace pfs::reader::detail {
namespace {

// A declared error's identity as its record holds it (an unpublished record: NULLs).
struct error_identity {
  bool known = false;
  std::int64_t number = 0;
  std::string name;
  std::string sql_state;
};

std::vector<error_identity> load_errors(scan_state& s) {
  std::vector<error_identity> errors(s.r.error_rows);  // index 0: the NULL row
  for (std::uint64_t i = 1; i < s.r.error_rows; ++i) {
    const error_record* r = s.r.at<error_record>(kArrayErrors, i - 1);
    if (r == nullptr || (load_acquire(r->lock) & kStateMask) != kStateAllocated) continue;
    error_identity& e = errors[i];
    e.known = true;
    e.number = load_relaxed(r->number);
    fixed_str<kErrorNameLen> name;
    name.load(r->name);
    e.name = name.str();
    fixed_str<kErrorSqlStateLen> sql_state;
    sql_state.load(r->sql_state);
    e.sql_state = sql_state.str();
  }
  return errors;
}

cell seconds_cell(std::uint64_t seconds) {
  return seconds == 0 ? null_cell() : int_cell(seconds * 1000000);  // timestamp: microseconds
}

// error_number ... last_seen (7 columns).
void append_error_cells(scan_state& s, row_builder& x, const error_identity& e, const error_stat& st) {
  x.push_back(e.known ? int_cell_signed(e.number) : null_cell());
  x.push_back(e.known ? s.text_cell(std::string_view(e.name)) : null_cell());
  x.push_back(e.known && !e.sql_state.empty() ? s.text_cell(std::string_view(e.sql_state)) : null_cell());
  x.push_back(int_cell_signed(st.raised));
  x.push_back(int_cell(st.handled));
  x.push_back(seconds_cell(st.first_seen));
  x.push_back(seconds_cell(st.last_seen));
}

}  // namespace

void rows_error_summary(scan_state& s, summary_kind which) {
  const bool by_thread = which == summary_kind::by_thread;
  const std::uint64_t per = s.r.error_rows;
  if (per == 0) return;
  const std::vector<error_identity> errors = load_errors(s);
  if (by_holder(which)) {
    const std::vector<holder_copy> holders = load_holders(s);
    const auto kind = static_cast<holder_kind>(holder_kind_of(which));
    const auto sums = holder_sums<error_stat>(
        s, holders, kind, kArrayThreadErrorStats, kArrayAccountErrorStats, per, error_stat{},
        [](const error_stat& e) { return load_error_stat(e); },
        [](error_stat& into, const error_stat& e) { add_error(into, e); });
    for (std::size_t h = 0; h < holders.size(); ++h) {
      if (holders[h].kind != kind || sums[h].empty()) continue;
      for (std::uint64_t i = 0; i < per; ++i) {
        if (i != 0 && !errors[i].known) continue;
        auto& x = s.add_row();
        append_holder_key(s, x, holders[h]);
        append_error_cells(s, x, errors[i], sums[h][i]);
      }
    }
    return;
  }
  std::vector<error_stat> global(per, error_stat{});
  if (!by_thread)
    for (std::uint64_t i = 0; i < per; ++i)
      global[i] = load_error_stat(*s.r.at<error_stat>(kArrayClassErrorStats, i));
  for (const live_thread& t : live_threads(s)) {
    for (std::uint64_t i = 0; i < per; ++i) {
      // Rows of errors not declared (yet) are not shown; their counts are 0.
      if (i != 0 && !errors[i].known) continue;
      const error_stat mine = load_error_stat(*s.r.at<error_stat>(kArrayThreadErrorStats, t.slot * per + i));
      if (!by_thread) {
        add_error(global[i], mine);
        continue;
      }
      auto& x = s.add_row();
      x.push_back(int_cell(t.thread_id));
      append_error_cells(s, x, errors[i], mine);
    }
  }
  if (by_thread) return;
  for (std::uint64_t i = 0; i < per; ++i) {
    if (i != 0 && !errors[i].known) continue;
    auto& x = s.add_row();
    append_error_cells(s, x, errors[i], global[i]);
  }
}

}  // namespace pfs::reader::detail

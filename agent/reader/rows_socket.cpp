// Row builders of the socket tables (MySQL 5.6+: socket_instances and the socket
// summaries, which follow the file io pattern).
#include "agent/reader/internal/reader_internal.h"

namespace pfs::reader::detail {

namespace {

// socket_instances (summary = false) or socket_summary_by_instance (summary = true).
void socket_rows(scan_state& s, bool summary) {
  for_each_socket(s, [&s, summary](const socket_copy& k, const class_entry& c) {
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view(c.name)));
    x.push_back(int_cell(k.identity));
    if (summary) {
      append_io_cells(x, k.stats);
      return;
    }
    x.push_back(nullable_int(k.thread_id));
    x.push_back(int_cell(static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.fd))));
    x.push_back(s.text_cell(k.ip.str()));
    x.push_back(int_cell(k.port));
    x.push_back(s.text_cell(std::string_view(k.state == kSocketIdle ? "IDLE" : "ACTIVE")));
  });
}

// Per socket class (index = class index - 1): its bucket of closed sockets + its
// open ones.
std::vector<io_stats> socket_class_stats(scan_state& s) {
  s.load_classes();
  std::vector<io_stats> sums(s.classes.size(), kZeroIoStats);
  for (std::size_t c = 0; c < s.classes.size(); ++c) {
    if (!s.classes[c].valid || s.classes[c].kind != kKindSocket) continue;
    if (const io_stats* b = s.r.at<io_stats>(kArrayClassIo, c)) merge_io_stats(sums[c], load_io_stats(*b));
  }
  for_each_socket(s, [&sums](const socket_copy& k, const class_entry&) {
    merge_io_stats(sums[k.class_index - 1], k.stats);
  });
  return sums;
}

}  // namespace

void rows_socket_instances(scan_state& s) { socket_rows(s, false); }

void rows_socket_summary_by_instance(scan_state& s) { socket_rows(s, true); }

void rows_socket_summary_by_event_name(scan_state& s) {
  const std::vector<io_stats> sums = socket_class_stats(s);
  for (std::size_t c = 0; c < s.classes.size(); ++c) {
    if (!s.classes[c].valid || s.classes[c].kind != kKindSocket) continue;
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view(s.classes[c].name)));
    append_io_cells(x, sums[c]);
  }
}

}  // namespace pfs::reader::detail

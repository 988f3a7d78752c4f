// Row builders of the socket tables (MySQL 5.6+: socket_instances and the socket
// summaries, which follow the file io pattern).
#include "agent/reader/reader_internal.h"

namespace pfs::reader::detail {

// socket_instances (summary = false) or socket_summary_by_instance (summary = true).
void scan_state::socket_instances(bool summary) {
  for_each_socket([this, summary](const socket_copy& s, const class_entry& c) {
    auto& x = add_row();
    x.push_back(text_cell(std::string_view(c.name)));
    x.push_back(int_cell(s.identity));
    if (summary) {
      append_io_cells(x, s.stats);
      return;
    }
    x.push_back(nullable_int(s.thread_id));
    x.push_back(int_cell(static_cast<std::uint64_t>(static_cast<std::uint32_t>(s.fd))));
    x.push_back(text_cell(s.ip.str()));
    x.push_back(int_cell(s.port));
    x.push_back(text_cell(std::string_view(s.state == kSocketIdle ? "IDLE" : "ACTIVE")));
  });
}

void scan_state::socket_summary_by_event_name() {
  const std::vector<io_stats> sums = socket_class_stats();
  for (std::size_t c = 0; c < classes.size(); ++c) {
    if (!classes[c].valid || classes[c].kind != kKindSocket) continue;
    auto& x = add_row();
    x.push_back(text_cell(std::string_view(classes[c].name)));
    append_io_cells(x, sums[c]);
  }
}

std::vector<io_stats> scan_state::socket_class_stats() {
  load_classes();
  std::vector<io_stats> sums(classes.size(), kZeroIoStats);
  for (std::size_t c = 0; c < classes.size(); ++c) {
    if (!classes[c].valid || classes[c].kind != kKindSocket) continue;
    if (const io_stats* b = r.at<io_stats>(kArrayClassIo, c)) merge_io_stats(sums[c], load_io_stats(*b));
  }
  for_each_socket([&sums](const socket_copy& s, const class_entry&) {
    merge_io_stats(sums[s.class_index - 1], s.stats);
  });
  return sums;
}

}  // namespace pfs::reader::detail

// accounts, users and hosts (MySQL 8.0): per holder its connections now and in
// total, and the most memory a thread of it held (MAX_SESSION_*_MEMORY, 8.0.31).
#include "agent/reader/internal/holder_rows.h"

namespace pfs::reader::detail {

std::vector<holder_copy> load_holders(scan_state& s) {
  std::vector<holder_copy> out(s.r.count(kArrayAccounts));
  for (std::uint64_t i = 0; i < out.size(); ++i) {
    holder_copy c;
    const rd res = read_versioned(*s.r.at<account_record>(kArrayAccounts, i), [&c](const account_record& a) {
      c.kind = load_relaxed(a.kind);
      c.user_slot = load_relaxed(a.user_slot);
      c.host_slot = load_relaxed(a.host_slot);
      fixed_str<kUserLen> user;
      user.load(a.user);
      c.user = user.str();
      fixed_str<kHostLen> host;
      host.load(a.host);
      c.host = host.str();
      c.current_connections = load_relaxed(a.current_connections);
      c.total_connections = load_relaxed(a.total_connections);
      c.max_controlled_memory = load_relaxed(a.max_controlled_memory);
      c.max_total_memory = load_relaxed(a.max_total_memory);
    });
    if (s.accept(res) && c.kind >= kHolderAccount && c.kind <= kHolderHost) out[i] = std::move(c);
  }
  return out;
}

void append_holder_key(scan_state& s, row_builder& x, const holder_copy& h) {
  const auto text = [&s](const std::string& v) {
    return v.empty() ? null_cell() : s.text_cell(std::string_view(v));
  };
  if (h.kind != kHolderHost) x.push_back(text(h.user));
  if (h.kind != kHolderUser) x.push_back(text(h.host));
}

void rows_holders(scan_state& s, std::uint8_t kind) {
  std::vector<holder_copy> holders = load_holders(s);
  // The memory marks of the threads in it now count too.
  for (std::uint64_t i = 0, n = s.r.used_threads(); i < n; ++i) {
    std::uint32_t slot = 0;
    std::int64_t controlled = 0, total = 0;
    const rd res = read_versioned(*s.r.at<thread_record>(kArrayThreads, i), [&](const thread_record& t) {
      slot = load_relaxed(kind == kHolderAccount ? t.account_slot
                          : kind == kHolderUser  ? t.user_slot
                                                 : t.host_slot);
      controlled = load_relaxed(t.max_controlled_memory);
      total = load_relaxed(t.max_total_memory);
    });
    if (!s.accept(res) || slot == 0 || slot > holders.size()) continue;
    holder_copy& h = holders[slot - 1];
    h.max_controlled_memory = std::max(h.max_controlled_memory, controlled);
    h.max_total_memory = std::max(h.max_total_memory, total);
  }
  for (const holder_copy& h : holders) {
    if (h.kind != kind) continue;
    auto& x = s.add_row();
    append_holder_key(s, x, h);
    x.push_back(int_cell_signed(std::max<std::int64_t>(h.current_connections, 0)));
    x.push_back(int_cell(h.total_connections));
    x.push_back(int_cell_signed(h.max_controlled_memory));
    x.push_back(int_cell_signed(h.max_total_memory));
  }
}

}  // namespace pfs::reader::detail

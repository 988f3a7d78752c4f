// tls_channel_status (MySQL 8.0): one row per (channel, property) of the channels
// the program registered, with the property's current value. Rows come in the
// order the channels were registered (channel_id), a channel's properties in the
// order of their records, which the provider takes in the order they are first set
// while the array has room after them.
#include <algorithm>

#include "agent/reader/internal/reader_internal.h"

namespace pfs::reader::detail {
namespace {

struct tls_copy {
  std::uint64_t channel_id = 0;
  std::uint64_t slot = 0;
  fixed_str<kTlsChannelLen> channel;
  fixed_str<kTlsPropertyLen> property;
  fixed_str<kTlsValueLen> value;
  bool value_ok = false;
};

// The value, which the program rewrites while the record stays allocated: its own
// seqlock (value_seq), like a file's name. False if it kept changing.
bool load_value(const tls_property_record& r, fixed_str<kTlsValueLen>& value) {
  for (int a = 0; a < kAttempts; ++a) {
    const std::uint32_t s1 = load_acquire(r.value_seq);
    if ((s1 & 1u) == 0) {
      value.load(r.value);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (load_relaxed(r.value_seq) == s1) return true;
    }
    cpu_relax();
  }
  return false;
}

rd read_tls_property(const tls_property_record& r, tls_copy& c) {
  const rd result = read_versioned(r, [&c](const tls_property_record& t) {
    c.channel_id = load_relaxed(t.channel_id);
    c.channel.load(t.channel);
    c.property.load(t.property);
    c.value_ok = load_value(t, c.value);
  });
  return result == rd::ok && !c.value_ok ? rd::torn : result;
}

}  // namespace

void rows_tls_channel_status(scan_state& s) {
  const std::uint64_t n = s.r.count(kArrayTlsProperties);
  std::vector<tls_copy> rows;
  for (std::uint64_t i = 0; i < n; ++i) {
    const tls_property_record* r = s.r.at<tls_property_record>(kArrayTlsProperties, i);
    if (r == nullptr) break;
    tls_copy c;
    c.slot = i;
    if (s.accept(read_tls_property(*r, c))) rows.push_back(c);
  }
  std::sort(rows.begin(), rows.end(), [](const tls_copy& a, const tls_copy& b) {
    return a.channel_id != b.channel_id ? a.channel_id < b.channel_id : a.slot < b.slot;
  });
  for (const tls_copy& c : rows) {
    auto& x = s.add_row();
    x.push_back(s.text_cell(c.channel.str()));
    x.push_back(s.text_cell(c.property.str()));
    x.push_back(s.text_cell(c.value.str()));
  }
}

}  // namespace pfs::reader::detail

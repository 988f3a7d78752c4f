// setup_meters and setup_metrics (MySQL 8.4's telemetry tables): the program's
// meters, and its metrics with their values. A metric's VALUE is its record's value
// plus the cells of the live threads (meter_layout.h), summed again when a thread
// folded its cells meanwhile, so that no fold is counted twice.
#include <bit>

#include "agent/reader/internal/reader_internal.h"

namespace pfs::reader::detail {
namespace {

cell double_cell(double v) {
  cell c;
  c.null = false;
  c.d = v;
  return c;
}

// A fixed-size field as text ('' when empty, as MySQL shows an empty UNIT).
template <std::size_t N>
cell field_text(scan_state& s, const char (&field)[N]) {
  fixed_str<N> f;
  f.load(field);
  return s.text_cell(f.str());
}

// The sum of every published metric's cells: index = metric index.
std::vector<std::uint64_t> metric_values(scan_state& s, const std::vector<const metric_record*>& metrics) {
  const region_header& h = s.h;
  const std::uint64_t per = metrics.size();
  std::vector<std::uint64_t> out(per, 0);
  const std::vector<live_thread> threads = live_threads(s);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::uint64_t finished = __atomic_load_n(&h.metric_folds_finished, __ATOMIC_SEQ_CST);
    const std::uint64_t started = __atomic_load_n(&h.metric_folds_started, __ATOMIC_SEQ_CST);
    for (std::uint64_t i = 0; i < per; ++i) {
      const metric_record* r = metrics[i];
      if (r == nullptr) continue;
      const std::uint8_t num = load_relaxed(r->num_type);
      std::uint64_t v = load_relaxed(r->value);
      if (metric_sharded(load_relaxed(r->type)))
        for (const live_thread& t : threads) {
          const std::uint64_t* c = s.r.at<std::uint64_t>(kArrayThreadMetricValues, t.slot * per + i);
          if (c != nullptr) v = add_metric_cells(num, v, load_relaxed(*c));
        }
      out[i] = v;
    }
    // A fold in progress at the start, or one that started meanwhile: sum again.
    if (started == finished && __atomic_load_n(&h.metric_folds_started, __ATOMIC_SEQ_CST) == started) break;
  }
  return out;
}

}  // namespace

void rows_setup_meters(scan_state& s) {
  for (std::uint64_t i = 0; i < s.r.count(kArrayMeters); ++i) {
    const meter_record* r = s.r.at<meter_record>(kArrayMeters, i);
    if (r == nullptr || (load_acquire(r->lock) & kStateMask) != kStateAllocated) continue;
    auto& x = s.add_row();
    x.push_back(field_text(s, r->name));
    x.push_back(int_cell(load_relaxed(r->frequency)));
    x.push_back(yes_no(load_relaxed(r->enabled) != 0));
    x.push_back(field_text(s, r->description));
  }
}

void rows_setup_metrics(scan_state& s) {
  const std::uint64_t n = s.r.count(kArrayMetrics);
  std::vector<const metric_record*> metrics(n, nullptr);
  for (std::uint64_t i = 0; i < n; ++i) {
    const metric_record* r = s.r.at<metric_record>(kArrayMetrics, i);
    if (r != nullptr && (load_acquire(r->lock) & kStateMask) == kStateAllocated) metrics[i] = r;
  }
  const std::vector<std::uint64_t> values = metric_values(s, metrics);
  for (std::uint64_t i = 0; i < n; ++i) {
    const metric_record* r = metrics[i];
    if (r == nullptr) continue;
    const std::uint32_t meter = load_relaxed(r->meter_index);
    const meter_record* m = meter >= 1 && meter <= s.r.count(kArrayMeters)
                                ? s.r.at<meter_record>(kArrayMeters, meter - 1)
                                : nullptr;
    const char* type = metric_type_name(load_relaxed(r->type));
    const std::uint8_t num = load_relaxed(r->num_type);
    const char* num_name = metric_num_type_name(num);
    // A record no agent writes (a damaged file): not shown.
    if (m == nullptr || (load_acquire(m->lock) & kStateMask) != kStateAllocated || type == nullptr ||
        num_name == nullptr)
      continue;
    auto& x = s.add_row();
    x.push_back(field_text(s, r->name));
    x.push_back(field_text(s, m->name));
    x.push_back(stable_text(type));
    x.push_back(stable_text(num_name));
    x.push_back(num == kMetricDouble
                    ? double_cell(std::bit_cast<double>(values[i]))
                    : double_cell(static_cast<double>(static_cast<std::int64_t>(values[i]))));
    x.push_back(field_text(s, r->unit));
    x.push_back(field_text(s, r->description));
  }
}

}  // namespace pfs::reader::detail

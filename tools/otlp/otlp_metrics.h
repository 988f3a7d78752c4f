// Metric building: the region's summaries as cumulative monotonic Sums (counts and
// total times, start time the region's creation), its histogram tables as
// explicit-bounds Histograms (bounds: the buckets' BUCKET_TIMER_HIGH exactly, in
// seconds), and current values (lost counters, threads, memory in use) as Gauges.
// Series are per event name by default; per thread and per digest on request,
// at most max_series points per metric.
#pragma once

#include <cstddef>
#include <vector>

#include "agent/reader/reader.h"
#include "tools/otlp/otlp_exporter.h"
#include "tools/otlp/otlp_model.h"

namespace pfs::otlp {

struct metric_options {
  bool per_thread = false;
  bool per_digest = false;
  std::size_t max_series = 1000;
};

region_error build_metrics(reader::region_reader& r, const metric_options& o, const exporter_counters& own,
                           std::vector<metric>& out);

}  // namespace pfs::otlp

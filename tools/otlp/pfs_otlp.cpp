// pfs_otlp: exports a perfschema region over OTLP/HTTP to an OpenTelemetry
// collector (docs/operations.md, "OpenTelemetry export"). It only reads the region:
// the program is never touched.
//
//   pfs_otlp --region /tmp/demo/app.pfs --once --endpoint http://localhost:4318
//
// --region is a region file or a directory of them (one resource each). --once
// exports what the regions hold and exits; otherwise it exports every --interval
// what is new (per-thread cursors, kept in the state file so a restart sends no
// span twice) until SIGINT or SIGTERM.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tools/otlp/otlp_events.h"
#include "tools/otlp/otlp_exporter.h"
#include "tools/otlp/otlp_json.h"
#include "tools/otlp/otlp_metrics.h"
#include "tools/otlp/otlp_options.h"
#include "tools/otlp/otlp_protobuf.h"
#include "tools/otlp/otlp_regions.h"
#include "tools/otlp/otlp_resource.h"
#include "tools/otlp/otlp_spans.h"
#include "tools/otlp/otlp_state.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

using namespace pfs::otlp;

struct round_result {
  std::uint64_t spans = 0;
  std::uint64_t points = 0;
  std::uint64_t untimed = 0;
};

// Reads what is new, builds and encodes it, and queues the requests.
bool export_round(pfs::reader::region_reader& reader, const options& o, region_memory& memory, exporter& out,
                  round_result& result, std::string& error) {
  region_events events;
  if (o.traces) {
    if (const pfs::region_error err = read_region_events(reader, o.min_wait_ps, memory, events)) {
      error = err.message;
      return false;
    }
  } else {
    events.identity = read_identity(reader);
  }
  const resource res = make_resource(o, events.identity);
  if (o.traces) {
    // A batch of spans at a time: built, encoded, queued and let go.
    const std::size_t total = events.completed.size();
    result.spans += total;
    result.untimed += events.untimed_skipped;
    std::vector<span> batch;
    for (std::size_t at = 0; at < total; at += o.max_batch) {
      const std::size_t n = std::min(o.max_batch, total - at);
      batch.clear();
      build_spans(events, at, n, batch);
      out.enqueue(signal_kind::traces,
                  o.json ? encode_traces_json(res, batch) : encode_traces_protobuf(res, batch), n);
    }
  }
  if (o.metrics) {
    std::vector<metric> metrics;
    metric_options mo{o.per_thread, o.per_digest, o.max_series};
    if (const pfs::region_error err = build_metrics(reader, mo, out.counters(), metrics)) {
      error = err.message;
      return false;
    }
    std::uint64_t points = 0;
    for (const metric& m : metrics) points += m.points.size() + m.histogram_points.size();
    result.points += points;
    out.enqueue(signal_kind::metrics,
                o.json ? encode_metrics_json(res, metrics) : encode_metrics_protobuf(res, metrics), points);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  std::string error;
  bool help = false;
  if (!parse_options(argc, argv, o, error, help)) {
    if (help) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::fprintf(stderr, "pfs_otlp: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  std::vector<std::string> regions;
  bool is_directory = false;
  if (!list_regions(o.region, regions, is_directory, error)) {
    std::fprintf(stderr, "pfs_otlp: %s\n", error.c_str());
    return 1;
  }
  exporter out;
  if (!out.init(o, error)) {
    std::fprintf(stderr, "pfs_otlp: %s\n", error.c_str());
    return 2;
  }
  std::string state_path = o.state_path;
  if (state_path.empty() && !o.once) state_path = default_state_path(o.region, is_directory);
  export_state state = state_path.empty() ? export_state{} : load_state(state_path);

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  int status = 0;
  for (bool first = true;; first = false) {
    const auto started = std::chrono::steady_clock::now();
    if (!first && is_directory && !list_regions(o.region, regions, is_directory, error))
      std::fprintf(stderr, "pfs_otlp: %s\n", error.c_str());
    round_result r;
    export_state seen;  // the regions of this round: the state keeps these only
    bool read_all = true;
    for (const std::string& path : regions) {
      pfs::region_error err;
      auto reader = pfs::reader::region_reader::open(path, false, err);
      if (!reader) {  // in a directory: skipped, the others go on
        std::fprintf(stderr, "pfs_otlp: %s: %s%s\n", path.c_str(), err.message.c_str(),
                     is_directory ? " (skipped)" : "");
        read_all = false;
        continue;
      }
      const region_key key = key_of(read_identity(*reader));
      region_memory& memory = seen[key];
      memory = state[key];  // a copy: two paths of one region (a hard link) both start from it
      if (!export_round(*reader, o, memory, out, r, error)) {
        std::fprintf(stderr, "pfs_otlp: %s: %s\n", path.c_str(), error.c_str());
        read_all = false;
      }
    }
    if (!is_directory && !read_all) return 1;
    state = std::move(seen);
    const auto built = std::chrono::steady_clock::now();
    // The cursors are saved once the requests are queued: a restart sends no span
    // twice (what was queued and not yet sent when the exporter stopped is lost).
    if (!state_path.empty() && !save_state(state_path, state, error))
      std::fprintf(stderr, "pfs_otlp: %s\n", error.c_str());
    const bool sent = out.flush(error);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double build_seconds = std::chrono::duration<double>(built - started).count();
    const exporter_counters& c = out.counters();
    std::fprintf(
        stderr,
        "pfs_otlp: %llu spans, %llu metric points from %zu regions in %.3f s (%.0f spans/s read and "
        "encoded); sent %llu requests, %llu retries, %zu queued, %llu dropped (%llu spans or points)%s%s\n",
        static_cast<unsigned long long>(r.spans), static_cast<unsigned long long>(r.points), regions.size(),
        seconds, build_seconds > 0 ? static_cast<double>(r.spans) / build_seconds : 0.0,
        static_cast<unsigned long long>(c.requests_sent), static_cast<unsigned long long>(c.retries),
        out.queued(), static_cast<unsigned long long>(c.requests_dropped),
        static_cast<unsigned long long>(c.items_dropped), sent ? "" : "; ", sent ? "" : error.c_str());
    if (o.once) {
      status = sent && (read_all || is_directory) ? 0 : 1;  // a directory skips what is not a region
      break;
    }
    const auto next = started + std::chrono::duration<double>(o.interval_s);
    while (!g_stop && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (g_stop) break;
  }
  return status;
}

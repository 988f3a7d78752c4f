// The sending side of pfs_otlp: requests (encoded, gzipped when asked) wait in a
// bounded queue and are sent in order with retries (otlp_http.h); when the queue is
// full the oldest request is dropped and its spans or points counted. With --output
// the request bodies go to a file instead, one per line (JSON lines for http/json).
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>

#include "tools/otlp/otlp_http.h"
#include "tools/otlp/otlp_options.h"

namespace pfs::otlp {

enum class signal_kind { traces, metrics };

struct export_request {
  signal_kind signal = signal_kind::traces;
  std::string body;         // encoded (and gzipped when asked)
  std::uint64_t items = 0;  // spans or data points
};

struct exporter_counters {
  std::uint64_t requests_sent = 0;
  std::uint64_t spans_sent = 0;
  std::uint64_t points_sent = 0;
  std::uint64_t retries = 0;           // attempts beyond the first
  std::uint64_t requests_dropped = 0;  // queue overflow
  std::uint64_t items_dropped = 0;
  std::uint64_t bytes_sent = 0;
};

class exporter {
 public:
  ~exporter();
  // False (error set) if an endpoint does not parse or the output cannot be opened.
  bool init(const options& o, std::string& error);
  // Queues an encoded message (gzipped here when asked). A full queue is flushed
  // first; if that fails the oldest request is dropped and counted.
  void enqueue(signal_kind signal, std::string body, std::uint64_t items);
  // Sends queued requests in order; stops at the first that fails after its retries
  // (it stays queued). False when something is left.
  bool flush(std::string& error);
  std::size_t queued() const { return queue_.size(); }
  const exporter_counters& counters() const { return counters_; }

 private:
  const options* options_ = nullptr;
  http_endpoint traces_, metrics_;
  http_headers traces_headers_, metrics_headers_;
  std::FILE* output_ = nullptr;
  std::deque<export_request> queue_;
  bool failing_ = false;  // the last flush failed: a full queue drops rather than sends
  exporter_counters counters_;
};

}  // namespace pfs::otlp

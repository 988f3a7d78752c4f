#include "tools/otlp/otlp_exporter.h"

#include <cerrno>
#include <cstring>

namespace pfs::otlp {

exporter::~exporter() {
  if (output_ != nullptr && output_ != stdout) std::fclose(output_);
}

bool exporter::init(const options& o, std::string& error) {
  options_ = &o;
  if (!o.output.empty()) {
    if (!o.json) {
      error = "--output writes JSON lines: use it with --protocol http/json";
      return false;
    }
    output_ = o.output == "-" ? stdout : std::fopen(o.output.c_str(), "w");
    if (output_ == nullptr) {
      error = "cannot write " + o.output + ": " + std::strerror(errno);
      return false;
    }
    return true;
  }
  if (o.traces && !parse_http_url(o.traces_endpoint, traces_, error)) return false;
  if (o.metrics && !parse_http_url(o.metrics_endpoint, metrics_, error)) return false;
  http_headers common = {{"Content-Type", o.json ? "application/json" : "application/x-protobuf"},
                         {"User-Agent", "pfs_otlp/1"}};
  if (o.gzip) common.emplace_back("Content-Encoding", "gzip");
  for (const auto& h : o.headers) common.push_back(h);
  traces_headers_ = metrics_headers_ = common;
  return true;
}

void exporter::enqueue(signal_kind signal, std::string body, std::uint64_t items) {
  if (options_->gzip && output_ == nullptr) body = gzip(body);
  // A full queue is sent first; only when that fails (the collector is away) does the
  // oldest request go.
  if (queue_.size() >= options_->max_queue && !failing_) {
    std::string error;
    failing_ = !flush(error);
  }
  while (queue_.size() >= options_->max_queue) {  // the oldest goes: newer data is worth more
    ++counters_.requests_dropped;
    counters_.items_dropped += queue_.front().items;
    queue_.pop_front();
  }
  queue_.push_back({signal, std::move(body), items});
}

bool exporter::flush(std::string& error) {
  failing_ = false;
  retry_policy policy;
  policy.max_attempts = options_->max_attempts;
  policy.initial_backoff_ms = options_->initial_backoff_ms;
  while (!queue_.empty()) {
    export_request& r = queue_.front();
    if (output_ != nullptr) {
      std::fwrite(r.body.data(), 1, r.body.size(), output_);
      std::fputc('\n', output_);
      if (std::fflush(output_) != 0) {
        error = "cannot write " + options_->output + ": " + std::strerror(errno);
        return false;
      }
    } else {
      const bool traces = r.signal == signal_kind::traces;
      const send_result sent =
          post_with_retries(traces ? traces_ : metrics_, traces ? traces_headers_ : metrics_headers_, r.body,
                            options_->timeout_ms, policy);
      counters_.retries += static_cast<std::uint64_t>(sent.attempts - 1);
      if (!sent.ok) {
        error = sent.error + " (after " + std::to_string(sent.attempts) + " attempts)";
        failing_ = true;
        return false;
      }
    }
    ++counters_.requests_sent;
    counters_.bytes_sent += r.body.size();
    (r.signal == signal_kind::traces ? counters_.spans_sent : counters_.points_sent) += r.items;
    queue_.pop_front();
  }
  return true;
}

}  // namespace pfs::otlp

// pfs_otlp's options: the command line over OpenTelemetry's standard exporter
// environment variables (OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES), which over the defaults.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pfs::otlp {

struct options {
  std::string region;  // a region file
  bool once = false;
  double interval_s = 10;
  std::string traces_endpoint;   // full URLs (".../v1/traces")
  std::string metrics_endpoint;  // (".../v1/metrics")
  bool json = false;             // http/json; else http/protobuf
  bool gzip = false;
  int timeout_ms = 10000;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string service_name;                                         // empty: the program's name
  std::vector<std::pair<std::string, std::string>> resource_attrs;  // OTEL_RESOURCE_ATTRIBUTES
  std::uint64_t min_wait_ps = 1'000'000'000;                        // 1 ms
  std::string state_path;  // empty: <region>.otlp-state (continuous mode), none with --once
  bool traces = true;
  bool metrics = true;
  // Spans per request: about 1.5 MB of JSON (less in protobuf), far below a
  // collector's default request limit (20 MiB); fewer, larger requests cost the
  // receiver less than the SDKs' 512.
  std::size_t max_batch = 2048;
  std::size_t max_queue = 64;  // requests waiting to be sent
  bool per_thread = false;     // metrics: per-thread series
  bool per_digest = false;     // metrics: per-digest series
  std::size_t max_series = 1000;
  std::string output;  // write request bodies here (one per line) instead of sending
  int max_attempts = 5;
  int initial_backoff_ms = 250;
};

// Parses environment then argv into out; false with error set (or error empty and
// help true for --help).
bool parse_options(int argc, char** argv, options& out, std::string& error, bool& help);

// "k=v,k2=v2" with percent-encoded values (OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_RESOURCE_ATTRIBUTES).
bool parse_key_values(const std::string& text, std::vector<std::pair<std::string, std::string>>& out);

// "1ms", "250us", "2s", "0", "1500ns" (a bare number is milliseconds) in picoseconds.
bool parse_duration_ps(const std::string& text, std::uint64_t& out);

extern const char kUsage[];

}  // namespace pfs::otlp

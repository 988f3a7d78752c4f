// OTLP/HTTP transport: a POST over plain HTTP/1.1 (one connection per request; https
// needs a local proxy or a collector-side TLS terminator), gzip when asked, and
// retries with exponential backoff on 429, 502, 503, 504 and on connection errors,
// honouring Retry-After (seconds), as the OTLP specification asks.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pfs::otlp {

struct http_endpoint {
  std::string host;
  std::string port = "80";
  std::string path = "/";
};
// "http://host[:port][/path]"; false (error set) for anything else.
bool parse_http_url(const std::string& url, http_endpoint& out, std::string& error);

using http_headers = std::vector<std::pair<std::string, std::string>>;

struct http_response {
  int status = 0;                   // 0: no answer (error says why)
  double retry_after_seconds = -1;  // -1: no Retry-After
  std::string body;
  std::string error;
};

http_response http_post(const http_endpoint& to, const http_headers& headers, const std::string& body,
                        int timeout_ms);

// RFC 1952 gzip of data (zlib).
std::string gzip(const std::string& data);

struct retry_policy {
  int max_attempts = 5;
  int initial_backoff_ms = 250;
  int max_backoff_ms = 8000;
  int max_retry_after_ms = 30000;  // a longer Retry-After is cut to this
};
bool retryable_status(int status);

struct send_result {
  bool ok = false;
  int attempts = 0;
  int status = 0;  // the last answer's
  std::string error;
};
send_result post_with_retries(const http_endpoint& to, const http_headers& headers, const std::string& body,
                              int timeout_ms, const retry_policy& policy);

}  // namespace pfs::otlp

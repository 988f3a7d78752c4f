#include "tools/otlp/otlp_http.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace pfs::otlp {

namespace {

using clock_type = std::chrono::steady_clock;

int remaining_ms(clock_type::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

bool wait_for(int fd, short events, clock_type::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, remaining_ms(deadline));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

int connect_to(const http_endpoint& to, clock_type::time_point deadline, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (const int rc = getaddrinfo(to.host.c_str(), to.port.c_str(), &hints, &list); rc != 0) {
    error = "cannot resolve " + to.host + ": " + gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = list; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    int so_error = errno;
    if (so_error == EINPROGRESS && wait_for(fd, POLLOUT, deadline)) {
      socklen_t len = sizeof so_error;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
    } else if (so_error == EINPROGRESS) {
      so_error = ETIMEDOUT;
    }
    if (so_error == 0) break;
    error = "cannot connect to " + to.host + ":" + to.port + ": " + std::strerror(so_error);
    close(fd);
    fd = -1;
  }
  freeaddrinfo(list);
  if (fd >= 0) {
    error.clear();
    // The request goes out in two writes (head, body): without this the body's last
    // segment waits for the server's delayed ACK (milliseconds a request).
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

bool send_all(int fd, const char* data, std::size_t n, clock_type::time_point deadline) {
  while (n > 0) {
    const ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
    if (w > 0) {
      data += w;
      n -= static_cast<std::size_t>(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLOUT, deadline)) return false;
    } else {
      return false;
    }
  }
  return true;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

// Status line, Retry-After and the body (Content-Length, or until the server closes).
bool parse_response(const std::string& raw, http_response& out, bool complete_stream) {
  const std::size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return false;
  if (raw.compare(0, 5, "HTTP/") != 0) return false;
  const std::size_t sp = raw.find(' ');
  out.status = std::atoi(raw.c_str() + sp + 1);
  long long content_length = -1;
  std::size_t line = raw.find("\r\n") + 2;
  while (line < head_end) {
    const std::size_t eol = raw.find("\r\n", line);
    const std::size_t colon = raw.find(':', line);
    if (colon != std::string::npos && colon < eol) {
      const std::string name = lower(raw.substr(line, colon - line));
      std::string value = raw.substr(colon + 1, eol - colon - 1);
      value.erase(0, value.find_first_not_of(" \t"));
      if (name == "content-length") content_length = std::atoll(value.c_str());
      if (name == "retry-after" && !value.empty() && value[0] >= '0' && value[0] <= '9')
        out.retry_after_seconds = std::atof(value.c_str());
    }
    line = eol + 2;
  }
  const std::size_t body = head_end + 4;
  if (content_length >= 0) {
    if (raw.size() < body + static_cast<std::size_t>(content_length)) return false;
    out.body = raw.substr(body, static_cast<std::size_t>(content_length));
    return true;
  }
  if (!complete_stream) return false;
  out.body = raw.substr(body);
  return true;
}

}  // namespace

bool parse_http_url(const std::string& url, http_endpoint& out, std::string& error) {
  if (url.rfind("https://", 0) == 0) {
    error = "https is not supported (use a local proxy or a plain http:// endpoint): " + url;
    return false;
  }
  if (url.rfind("http://", 0) != 0) {
    error = "not an http:// URL: " + url;
    return false;
  }
  const std::string rest = url.substr(7);
  const std::size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  out.path = slash == std::string::npos ? "/" : rest.substr(slash);
  std::size_t colon = authority.rfind(':');
  if (!authority.empty() && authority[0] == '[') {  // [v6]:port
    const std::size_t close = authority.find(']');
    if (close == std::string::npos) {
      error = "bad host in " + url;
      return false;
    }
    out.host = authority.substr(1, close - 1);
    colon = authority.find(':', close);
    out.port = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  } else {
    out.host = authority.substr(0, colon);
    out.port = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  }
  if (out.host.empty() || out.port.empty()) {
    error = "bad host or port in " + url;
    return false;
  }
  return true;
}

http_response http_post(const http_endpoint& to, const http_headers& headers, const std::string& body,
                        int timeout_ms) {
  http_response out;
  const auto deadline = clock_type::now() + std::chrono::milliseconds(timeout_ms);
  const int fd = connect_to(to, deadline, out.error);
  if (fd < 0) return out;
  std::string request = "POST " + to.path + " HTTP/1.1\r\nHost: " + to.host + ":" + to.port +
                        "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
  request += "\r\n";
  if (!send_all(fd, request.data(), request.size(), deadline) ||
      !send_all(fd, body.data(), body.size(), deadline)) {
    out.error = "cannot send to " + to.host + ":" + to.port + ": " + std::strerror(errno);
    close(fd);
    return out;
  }
  std::string raw;
  char buf[16384];
  for (;;) {
    if (parse_response(raw, out, false)) break;
    if (!wait_for(fd, POLLIN, deadline)) {
      out.status = 0;
      out.error =
          "no answer from " + to.host + ":" + to.port + " within " + std::to_string(timeout_ms) + " ms";
      break;
    }
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) {
      if (!parse_response(raw, out, true)) {
        out.status = 0;
        out.error = "connection closed by " + to.host + ":" + to.port + " before a whole answer";
      }
      break;
    }
    raw.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  return out;
}

std::string gzip(const std::string& data) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return rc == Z_STREAM_END ? out : std::string();
}

bool retryable_status(int status) { return status == 429 || status == 502 || status == 503 || status == 504; }

send_result post_with_retries(const http_endpoint& to, const http_headers& headers, const std::string& body,
                              int timeout_ms, const retry_policy& policy) {
  send_result r;
  int backoff_ms = policy.initial_backoff_ms;
  for (r.attempts = 1;; ++r.attempts) {
    const http_response answer = http_post(to, headers, body, timeout_ms);
    r.status = answer.status;
    if (answer.status >= 200 && answer.status < 300) {
      r.ok = true;
      r.error.clear();
      return r;
    }
    r.error = answer.status != 0
                  ? "HTTP " + std::to_string(answer.status) + " from " + to.host + ":" + to.port + to.path
                  : answer.error;
    const bool retry = answer.status == 0 || retryable_status(answer.status);
    if (!retry || r.attempts >= policy.max_attempts) return r;
    int wait_ms = backoff_ms;
    if (answer.retry_after_seconds >= 0)
      wait_ms =
          static_cast<int>(std::min<double>(answer.retry_after_seconds * 1000, policy.max_retry_after_ms));
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    backoff_ms = std::min(backoff_ms * 2, policy.max_backoff_ms);
  }
}

}  // namespace pfs::otlp

#include "tools/otlp/otlp_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace pfs::otlp {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// A JSON string literal. The reader hands out valid UTF-8, passed through as is;
// control characters are escaped.
void string_literal(std::string& out, std::string_view s) {
  out.push_back('"');
  std::size_t plain = 0;  // the start of the run of bytes that need no escape
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c != '"' && c != '\\' && c >= 0x20) continue;
    out.append(s.data() + plain, i - plain);
    plain = i + 1;
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  out.append(s.data() + plain, s.size() - plain);
  out.push_back('"');
}

template <std::size_t N>
void hex_literal(std::string& out, const std::array<std::uint8_t, N>& bytes) {
  out.push_back('"');
  for (std::uint8_t b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  out.push_back('"');
}

template <class T>
void number(std::string& out, T v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}
// 64-bit integers are strings in OTLP JSON.
template <class T>
void quoted_number(std::string& out, T v) {
  out.push_back('"');
  number(out, v);
  out.push_back('"');
}
void double_number(std::string& out, double v) {
  if (!std::isfinite(v)) v = 0;  // JSON has no NaN or infinity
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  out.append(buf, r.ptr);
}

void key(std::string& out, const char* k) {
  out.push_back('"');
  out += k;
  out += "\":";
}

void attributes_array(std::string& out, const attributes& attrs) {
  out.push_back('[');
  bool first = true;
  for (const key_value& kv : attrs) {
    if (!first) out.push_back(',');
    first = false;
    out += "{\"key\":";
    string_literal(out, kv.key);
    out += ",\"value\":{";
    switch (kv.value.type) {
      case any_value::kind::string:
        key(out, "stringValue");
        string_literal(out, kv.value.s);
        break;
      case any_value::kind::int64:
        key(out, "intValue");
        quoted_number(out, kv.value.i);
        break;
      case any_value::kind::float64:
        key(out, "doubleValue");
        double_number(out, kv.value.d);
        break;
    }
    out += "}}";
  }
  out.push_back(']');
}

void resource_and_scope(std::string& out, const resource& res, const char* scoped) {
  out += "{\"resource\":{\"attributes\":";
  attributes_array(out, res.attrs);
  out += "},\"";
  out += scoped;
  out += "\":[{\"scope\":{\"name\":\"";
  out += kScopeName;
  out += "\",\"version\":\"";
  out += kScopeVersion;
  out += "\"},";
}

void span_object(std::string& out, const span& s) {
  out += "{\"traceId\":";
  hex_literal(out, s.trace);
  out += ",\"spanId\":";
  hex_literal(out, s.id);
  if (s.has_parent) {
    out += ",\"parentSpanId\":";
    hex_literal(out, s.parent);
  }
  out += ",\"name\":";
  string_literal(out, s.name);
  out += ",\"kind\":";
  number(out, s.kind);
  out += ",\"startTimeUnixNano\":";
  quoted_number(out, s.start_unix_ns);
  out += ",\"endTimeUnixNano\":";
  quoted_number(out, s.end_unix_ns);
  out += ",\"attributes\":";
  attributes_array(out, s.attrs);
  if (s.status_code != kStatusUnset || !s.status_message.empty()) {
    out += ",\"status\":{\"code\":";
    number(out, s.status_code);
    if (!s.status_message.empty()) {
      out += ",\"message\":";
      string_literal(out, s.status_message);
    }
    out.push_back('}');
  }
  out.push_back('}');
}

void point_times(std::string& out, std::uint64_t start, std::uint64_t time) {
  if (start != 0) {
    out += ",\"startTimeUnixNano\":";
    quoted_number(out, start);
  }
  out += ",\"timeUnixNano\":";
  quoted_number(out, time);
}

void number_points(std::string& out, const std::vector<number_point>& points) {
  out += "\"dataPoints\":[";
  bool first = true;
  for (const number_point& p : points) {
    if (!first) out.push_back(',');
    first = false;
    out += "{\"attributes\":";
    attributes_array(out, p.attrs);
    point_times(out, p.start_unix_ns, p.time_unix_ns);
    if (p.is_double) {
      out += ",\"asDouble\":";
      double_number(out, p.as_double);
    } else {
      out += ",\"asInt\":";
      quoted_number(out, p.as_int);
    }
    out.push_back('}');
  }
  out.push_back(']');
}

void histogram_points(std::string& out, const std::vector<histogram_point>& points) {
  out += "\"dataPoints\":[";
  bool first = true;
  for (const histogram_point& p : points) {
    if (!first) out.push_back(',');
    first = false;
    out += "{\"attributes\":";
    attributes_array(out, p.attrs);
    point_times(out, p.start_unix_ns, p.time_unix_ns);
    out += ",\"count\":";
    quoted_number(out, p.count);
    out += ",\"sum\":";
    double_number(out, p.sum);
    out += ",\"bucketCounts\":[";
    for (std::size_t i = 0; i < p.bucket_counts.size(); ++i) {
      if (i) out.push_back(',');
      quoted_number(out, p.bucket_counts[i]);
    }
    out += "],\"explicitBounds\":[";
    for (std::size_t i = 0; i < p.explicit_bounds.size(); ++i) {
      if (i) out.push_back(',');
      double_number(out, p.explicit_bounds[i]);
    }
    out += "]}";
  }
  out.push_back(']');
}

void metric_object(std::string& out, const metric& m) {
  out += "{\"name\":";
  string_literal(out, m.name);
  out += ",\"description\":";
  string_literal(out, m.description);
  out += ",\"unit\":";
  string_literal(out, m.unit);
  switch (m.type) {
    case metric::kind::gauge:
      out += ",\"gauge\":{";
      number_points(out, m.points);
      out += "}";
      break;
    case metric::kind::sum:
      out += ",\"sum\":{";
      number_points(out, m.points);
      out += ",\"aggregationTemporality\":";
      number(out, kTemporalityCumulative);
      out += m.monotonic ? ",\"isMonotonic\":true}" : ",\"isMonotonic\":false}";
      break;
    case metric::kind::histogram:
      out += ",\"histogram\":{";
      histogram_points(out, m.histogram_points);
      out += ",\"aggregationTemporality\":";
      number(out, kTemporalityCumulative);
      out += "}";
      break;
  }
  out.push_back('}');
}

}  // namespace

std::string encode_traces_json(const resource& res, const std::vector<span>& spans) {
  std::string out;
  out.reserve(256 + spans.size() * 640);
  out += "{\"resourceSpans\":[";
  resource_and_scope(out, res, "scopeSpans");
  out += "\"spans\":[";
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (i) out.push_back(',');
    span_object(out, spans[i]);
  }
  out += "]}]}]}";
  return out;
}

std::string encode_metrics_json(const resource& res, const std::vector<metric>& metrics) {
  std::string out;
  out += "{\"resourceMetrics\":[";
  resource_and_scope(out, res, "scopeMetrics");
  out += "\"metrics\":[";
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    if (i) out.push_back(',');
    metric_object(out, metrics[i]);
  }
  out += "]}]}]}";
  return out;
}

}  // namespace pfs::otlp

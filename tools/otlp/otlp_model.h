// The OTLP data model pfs_otlp builds and the encoders write: the parts of
// opentelemetry/proto/{common,resource,trace,metrics}/v1 that a region fills.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pfs::otlp {

// AnyValue: a string, a 64-bit integer or a double (the kinds a region has).
struct any_value {
  enum class kind : std::uint8_t { string, int64, float64 } type = kind::string;
  std::string s;
  std::int64_t i = 0;
  double d = 0;
};

// The key is a view: keys are literals or the options' strings, which live as long
// as the program (a span has a dozen attributes; no allocation for their keys).
struct key_value {
  std::string_view key;
  any_value value;
};
using attributes = std::vector<key_value>;

inline key_value text_attribute(std::string_view key, std::string value) {
  key_value kv{key, {}};
  kv.value.s = std::move(value);
  return kv;
}
inline key_value int_attribute(std::string_view key, std::int64_t value) {
  key_value kv{key, {}};
  kv.value.type = any_value::kind::int64;
  kv.value.i = value;
  return kv;
}

using trace_id = std::array<std::uint8_t, 16>;
using span_id = std::array<std::uint8_t, 8>;

// Span.SpanKind and Status.StatusCode (integers on the wire, in JSON too).
inline constexpr int kSpanKindInternal = 1;
inline constexpr int kStatusUnset = 0;
inline constexpr int kStatusError = 2;

struct span {
  trace_id trace{};
  span_id id{};
  span_id parent{};  // all zero: a root span (the field is then left out)
  bool has_parent = false;
  std::string name;
  int kind = kSpanKindInternal;
  std::uint64_t start_unix_ns = 0;
  std::uint64_t end_unix_ns = 0;
  attributes attrs;
  int status_code = kStatusUnset;
  std::string status_message;
};

// The resource (the instrumented process) and the instrumentation scope.
struct resource {
  attributes attrs;
};
inline constexpr const char* kScopeName = "perfschema";
inline constexpr const char* kScopeVersion = "1";

// Metrics. Sums are cumulative (AggregationTemporality 2).
inline constexpr int kTemporalityCumulative = 2;

struct number_point {
  attributes attrs;
  std::uint64_t start_unix_ns = 0;  // 0: left out (gauges)
  std::uint64_t time_unix_ns = 0;
  bool is_double = false;
  std::int64_t as_int = 0;
  double as_double = 0;
};

struct histogram_point {
  attributes attrs;
  std::uint64_t start_unix_ns = 0;
  std::uint64_t time_unix_ns = 0;
  std::uint64_t count = 0;
  double sum = 0;
  std::vector<std::uint64_t> bucket_counts;  // explicit_bounds.size() + 1
  std::vector<double> explicit_bounds;
};

struct metric {
  enum class kind : std::uint8_t { gauge, sum, histogram } type = kind::gauge;
  std::string name;
  std::string description;
  std::string unit;
  bool monotonic = true;  // sums
  std::vector<number_point> points;
  std::vector<histogram_point> histogram_points;
};

}  // namespace pfs::otlp

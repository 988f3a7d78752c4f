#include "tools/otlp/otlp_protobuf.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace pfs::otlp {

namespace {

// Wire types.
constexpr unsigned kVarint = 0;
constexpr unsigned kFixed64 = 1;
constexpr unsigned kLengthDelimited = 2;

class writer {
 public:
  std::string out;

  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  void tag(unsigned field, unsigned wire_type) { varint(std::uint64_t{field} << 3 | wire_type); }
  void fixed64_raw(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  }
  void uint_field(unsigned field, std::uint64_t v) {  // int32/int64/uint64/enum/bool
    if (v == 0) return;                               // proto3 default: not written
    tag(field, kVarint);
    varint(v);
  }
  void fixed64_field(unsigned field, std::uint64_t v) {
    if (v == 0) return;
    tag(field, kFixed64);
    fixed64_raw(v);
  }
  void double_field(unsigned field, double v) {  // written even when 0 (optional fields)
    tag(field, kFixed64);
    fixed64_raw(std::bit_cast<std::uint64_t>(v));
  }
  void bytes_field(unsigned field, const void* data, std::size_t n) {
    tag(field, kLengthDelimited);
    varint(n);
    out.append(static_cast<const char*>(data), n);
  }
  void string_field(unsigned field, std::string_view s) {
    if (s.empty()) return;
    bytes_field(field, s.data(), s.size());
  }
  // A nested message: fill() writes it into a writer of its own.
  template <class F>
  void message(unsigned field, F&& fill) {
    writer inner;
    fill(inner);
    bytes_field(field, inner.out.data(), inner.out.size());
  }
};

// common/v1: AnyValue {string_value 1, bool_value 2, int_value 3, double_value 4},
// KeyValue {key 1, value 2}.
void any_value_message(writer& w, const any_value& v) {
  switch (v.type) {
    case any_value::kind::string:
      w.bytes_field(1, v.s.data(), v.s.size());  // an empty string is still a value
      break;
    case any_value::kind::int64:
      w.tag(3, kVarint);
      w.varint(static_cast<std::uint64_t>(v.i));
      break;
    case any_value::kind::float64:
      w.double_field(4, v.d);
      break;
  }
}

void attributes_field(writer& w, unsigned field, const attributes& attrs) {
  for (const key_value& kv : attrs)
    w.message(field, [&](writer& m) {
      m.string_field(1, kv.key);
      m.message(2, [&](writer& v) { any_value_message(v, kv.value); });
    });
}

// resource/v1 Resource {attributes 1}; common/v1 InstrumentationScope {name 1, version 2}.
void resource_and_scope_start(writer& w, const resource& res) {
  w.message(1, [&](writer& r) { attributes_field(r, 1, res.attrs); });
}
void scope_message(writer& s) {
  s.message(1, [](writer& scope) {
    scope.string_field(1, kScopeName);
    scope.string_field(2, kScopeVersion);
  });
}

// trace/v1 Span {trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6,
// start_time_unix_nano 7 (fixed64), end_time_unix_nano 8 (fixed64), attributes 9,
// status 15 {message 2, code 3}}.
void span_message(writer& w, const span& s) {
  w.bytes_field(1, s.trace.data(), s.trace.size());
  w.bytes_field(2, s.id.data(), s.id.size());
  if (s.has_parent) w.bytes_field(4, s.parent.data(), s.parent.size());
  w.string_field(5, s.name);
  w.uint_field(6, static_cast<std::uint64_t>(s.kind));
  w.fixed64_field(7, s.start_unix_ns);
  w.fixed64_field(8, s.end_unix_ns);
  attributes_field(w, 9, s.attrs);
  if (s.status_code != kStatusUnset || !s.status_message.empty())
    w.message(15, [&](writer& st) {
      st.string_field(2, s.status_message);
      st.uint_field(3, static_cast<std::uint64_t>(s.status_code));
    });
}

// metrics/v1 NumberDataPoint {start_time_unix_nano 2, time_unix_nano 3, as_double 4,
// as_int 6 (sfixed64), attributes 7}.
void number_point_message(writer& w, const number_point& p) {
  attributes_field(w, 7, p.attrs);
  w.fixed64_field(2, p.start_unix_ns);
  w.fixed64_field(3, p.time_unix_ns);
  if (p.is_double) {
    w.double_field(4, p.as_double);
  } else {
    w.tag(6, kFixed64);
    w.fixed64_raw(static_cast<std::uint64_t>(p.as_int));
  }
}

// HistogramDataPoint {start_time_unix_nano 2, time_unix_nano 3, count 4 (fixed64),
// sum 5 (double), bucket_counts 6 (packed fixed64), explicit_bounds 7 (packed
// double), attributes 9}.
void histogram_point_message(writer& w, const histogram_point& p) {
  attributes_field(w, 9, p.attrs);
  w.fixed64_field(2, p.start_unix_ns);
  w.fixed64_field(3, p.time_unix_ns);
  w.fixed64_field(4, p.count);
  w.double_field(5, p.sum);
  w.message(6, [&](writer& packed) {
    for (std::uint64_t c : p.bucket_counts) packed.fixed64_raw(c);
  });
  if (!p.explicit_bounds.empty())
    w.message(7, [&](writer& packed) {
      for (double b : p.explicit_bounds) packed.fixed64_raw(std::bit_cast<std::uint64_t>(b));
    });
}

// Metric {name 1, description 2, unit 3, gauge 5, sum 7, histogram 9}; Gauge
// {data_points 1}; Sum {data_points 1, aggregation_temporality 2, is_monotonic 3};
// Histogram {data_points 1, aggregation_temporality 2}.
void metric_message(writer& w, const metric& m) {
  w.string_field(1, m.name);
  w.string_field(2, m.description);
  w.string_field(3, m.unit);
  switch (m.type) {
    case metric::kind::gauge:
      w.message(5, [&](writer& g) {
        for (const number_point& p : m.points) g.message(1, [&](writer& dp) { number_point_message(dp, p); });
      });
      break;
    case metric::kind::sum:
      w.message(7, [&](writer& s) {
        for (const number_point& p : m.points) s.message(1, [&](writer& dp) { number_point_message(dp, p); });
        s.uint_field(2, kTemporalityCumulative);
        s.uint_field(3, m.monotonic ? 1 : 0);
      });
      break;
    case metric::kind::histogram:
      w.message(9, [&](writer& h) {
        for (const histogram_point& p : m.histogram_points)
          h.message(1, [&](writer& dp) { histogram_point_message(dp, p); });
        h.uint_field(2, kTemporalityCumulative);
      });
      break;
  }
}

}  // namespace

// ExportTraceServiceRequest {resource_spans 1}; ResourceSpans {resource 1,
// scope_spans 2}; ScopeSpans {scope 1, spans 2}.
std::string encode_traces_protobuf(const resource& res, const std::vector<span>& spans) {
  writer w;
  w.message(1, [&](writer& rs) {
    resource_and_scope_start(rs, res);
    rs.message(2, [&](writer& ss) {
      scope_message(ss);
      for (const span& s : spans) ss.message(2, [&](writer& m) { span_message(m, s); });
    });
  });
  return std::move(w.out);
}

// ExportMetricsServiceRequest {resource_metrics 1}; ResourceMetrics {resource 1,
// scope_metrics 2}; ScopeMetrics {scope 1, metrics 2}.
std::string encode_metrics_protobuf(const resource& res, const std::vector<metric>& metrics) {
  writer w;
  w.message(1, [&](writer& rm) {
    resource_and_scope_start(rm, res);
    rm.message(2, [&](writer& sm) {
      scope_message(sm);
      for (const metric& m : metrics) sm.message(2, [&](writer& mm) { metric_message(mm, m); });
    });
  });
  return std::move(w.out);
}

}  // namespace pfs::otlp

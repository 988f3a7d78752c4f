#include "tools/otlp/otlp_metrics.h"

#include <time.h>

#include <map>
#include <string>

#include "tools/otlp/otlp_events.h"
#include "tools/otlp/otlp_scan.h"

namespace pfs::otlp {

namespace {

using reader::cell_view;
using reader::table_id;

int col(table_id t, const char* name) { return reader::column_index(reader::table(t), name); }

// A numeric (128-bit) or bigint cell as a double / clamped integer.
double as_double(const cell_view& c) {
  if (c.null) return 0;
  return static_cast<double>(c.hi) * 18446744073709551616.0 +
         static_cast<double>(static_cast<std::uint64_t>(c.i));
}
std::int64_t as_int(const cell_view& c) {
  if (c.null) return 0;
  if (c.hi != 0 || c.i < 0) return INT64_MAX;
  return c.i;
}
std::string as_text(const cell_view& c) { return c.null ? std::string() : std::string(c.s); }

constexpr double kPicosPerSecond = 1e12;

struct context {
  std::uint64_t start_ns = 0;
  std::uint64_t now_ns = 0;
  const metric_options* o = nullptr;
};

number_point int_point(const context& cx, attributes attrs, std::int64_t v, bool cumulative) {
  number_point p;
  p.attrs = std::move(attrs);
  p.start_unix_ns = cumulative ? cx.start_ns : 0;
  p.time_unix_ns = cx.now_ns;
  p.as_int = v;
  return p;
}
number_point double_point(const context& cx, attributes attrs, double v) {
  number_point p = int_point(cx, std::move(attrs), 0, true);
  p.is_double = true;
  p.as_double = v;
  return p;
}

metric make_metric(metric::kind kind, std::string name, std::string unit, std::string description) {
  metric m;
  m.type = kind;
  m.name = std::move(name);
  m.unit = std::move(unit);
  m.description = std::move(description);
  return m;
}

// COUNT_STAR and SUM_TIMER_WAIT of a summary table as two Sums, one point per row
// that counted something (at most max_series).
region_error summary_sums(reader::region_reader& r, const context& cx, table_id t, const char* prefix,
                          const char* what, std::vector<metric>& out) {
  metric count =
      make_metric(metric::kind::sum, std::string(prefix) + ".count", "{event}",
                  std::string("Completed ") + what + " (" + reader::table(t).name + " COUNT_STAR)");
  metric time = make_metric(
      metric::kind::sum, std::string(prefix) + ".duration", "s",
      std::string("Total time of the ") + what + " (" + reader::table(t).name + " SUM_TIMER_WAIT)");
  const int name = col(t, "event_name"), thread = col(t, "thread_id"), schema = col(t, "schema_name"),
            digest_text = col(t, "digest_text"), count_star = col(t, "count_star"),
            sum = col(t, "sum_timer_wait");
  auto err = scan(r, t, [&](const cell_view* c) {
    const std::int64_t n = as_int(c[count_star]);
    if (n == 0 || count.points.size() >= cx.o->max_series) return;
    attributes a;
    if (name >= 0) a.push_back(text_attribute("perfschema.event_name", as_text(c[name])));
    if (thread >= 0) a.push_back(int_attribute("thread.id", c[thread].i));
    if (schema >= 0 && !c[schema].null) a.push_back(text_attribute("db.namespace", as_text(c[schema])));
    if (digest_text >= 0) a.push_back(text_attribute("db.query.summary", as_text(c[digest_text])));
    count.points.push_back(int_point(cx, a, n, true));
    time.points.push_back(double_point(cx, std::move(a), as_double(c[sum]) / kPicosPerSecond));
  });
  if (err) return err;
  out.push_back(std::move(count));
  out.push_back(std::move(time));
  return {};
}

// A histogram table's rows (bucket_number ascending per key) as one point per key:
// bounds the BUCKET_TIMER_HIGH of every bucket but the last (the last is open), counts
// COUNT_BUCKET. sums: each key's SUM_TIMER_WAIT (picoseconds) from its summary.
region_error histogram(reader::region_reader& r, const context& cx, table_id t, const char* key_column,
                       const std::map<std::string, double>& sums, metric& m) {
  const int key = key_column ? col(t, key_column) : -1, number = col(t, "bucket_number"),
            high = col(t, "bucket_timer_high"), count = col(t, "count_bucket");
  struct building {
    histogram_point p;
    std::string key;
  };
  std::vector<building> points;
  std::vector<std::uint64_t> highs;
  auto err = scan(r, t, [&](const cell_view* c) {
    const std::string k = key >= 0 ? as_text(c[key]) : std::string();
    if (c[number].i == 0) {
      points.push_back({});
      points.back().key = k;
      highs.clear();
    }
    if (points.empty()) return;
    histogram_point& p = points.back().p;
    const auto n = static_cast<std::uint64_t>(as_int(c[count]));
    p.bucket_counts.push_back(n);
    p.count += n;
    p.explicit_bounds.push_back(static_cast<double>(static_cast<std::uint64_t>(c[high].i)) / kPicosPerSecond);
  });
  if (err) return err;
  for (building& b : points) {
    if (b.p.count == 0 || b.p.bucket_counts.empty() || m.histogram_points.size() >= cx.o->max_series)
      continue;
    b.p.explicit_bounds.pop_back();  // the last bucket has no upper bound
    b.p.start_unix_ns = cx.start_ns;
    b.p.time_unix_ns = cx.now_ns;
    if (auto s = sums.find(b.key); s != sums.end()) b.p.sum = s->second / kPicosPerSecond;
    if (key >= 0) b.p.attrs.push_back(text_attribute("perfschema.event_name", b.key));
    m.histogram_points.push_back(std::move(b.p));
  }
  return {};
}

// SUM_TIMER_WAIT by EVENT_NAME of a global summary ("" for their total too).
// The program's own metrics (setup_metrics) of its enabled meters (setup_meters):
// named <meter>.<name> with the program's unit and description; counters as
// monotonic Sums, up-down counters as non-monotonic Sums, gauges as Gauges (the
// observed ones, ASYNC ..., as their kind), integers or doubles as NUM_TYPE says.
region_error program_metrics(reader::region_reader& r, const context& cx, std::vector<metric>& out) {
  std::map<std::string, bool> enabled;
  {
    const table_id t = table_id::setup_meters;
    const int name = col(t, "name"), on = col(t, "enabled");
    if (auto err =
            scan(r, t, [&](const cell_view* c) { enabled[as_text(c[name])] = as_text(c[on]) == "YES"; }))
      return err;
  }
  const table_id t = table_id::setup_metrics;
  const int name = col(t, "name"), meter = col(t, "meter"), type = col(t, "metric_type"),
            num = col(t, "num_type"), value = col(t, "value"), unit = col(t, "unit"),
            description = col(t, "description");
  return scan(r, t, [&](const cell_view* c) {
    const std::string m = as_text(c[meter]), kind = as_text(c[type]);
    if (!enabled[m] || c[value].null) return;
    const bool gauge = kind.ends_with("GAUGE COUNTER"), updown = kind.ends_with("UPDOWN COUNTER");
    metric x = make_metric(gauge ? metric::kind::gauge : metric::kind::sum, m + "." + as_text(c[name]),
                           as_text(c[unit]), as_text(c[description]));
    x.monotonic = !updown;
    number_point p = as_text(c[num]) == "DOUBLE"
                         ? double_point(cx, {}, c[value].d)
                         : int_point(cx, {}, static_cast<std::int64_t>(c[value].d), !gauge);
    if (gauge) p.start_unix_ns = 0;
    x.points.push_back(std::move(p));
    out.push_back(std::move(x));
  });
}

region_error sums_by_name(reader::region_reader& r, table_id t, std::map<std::string, double>& out) {
  const int name = col(t, "event_name"), sum = col(t, "sum_timer_wait");
  return scan(r, t, [&](const cell_view* c) {
    const double v = as_double(c[sum]);
    out[as_text(c[name])] += v;
    out[""] += v;
  });
}

}  // namespace

region_error build_metrics(reader::region_reader& r, const metric_options& o, const exporter_counters& own,
                           std::vector<metric>& out) {
  context cx;
  cx.o = &o;
  cx.start_ns = read_identity(r).creation_time_ns;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  cx.now_ns =
      static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(now.tv_nsec);

  struct summary {
    table_id global, by_thread;
    const char* prefix;
    const char* what;
  };
  const summary summaries[] = {
      {table_id::events_statements_summary_global_by_event_name,
       table_id::events_statements_summary_by_thread_by_event_name, "perfschema.statements", "statements"},
      {table_id::events_transactions_summary_global_by_event_name,
       table_id::events_transactions_summary_by_thread_by_event_name, "perfschema.transactions",
       "transactions"},
      {table_id::events_stages_summary_global_by_event_name,
       table_id::events_stages_summary_by_thread_by_event_name, "perfschema.stages", "stages"},
      {table_id::events_waits_summary_global_by_event_name,
       table_id::events_waits_summary_by_thread_by_event_name, "perfschema.waits", "waits"},
  };
  for (const summary& s : summaries)
    if (auto err = summary_sums(r, cx, o.per_thread ? s.by_thread : s.global, s.prefix, s.what, out))
      return err;
  if (o.per_digest)
    if (auto err = summary_sums(r, cx, table_id::events_statements_summary_by_digest, "perfschema.digests",
                                "statements by digest", out))
      return err;

  std::map<std::string, double> statement_sums, wait_sums;
  if (auto err = sums_by_name(r, table_id::events_statements_summary_global_by_event_name, statement_sums))
    return err;
  if (auto err = sums_by_name(r, table_id::events_waits_summary_global_by_event_name, wait_sums)) return err;
  metric statements = make_metric(metric::kind::histogram, "perfschema.statements.latency", "s",
                                  "Statement latency (events_statements_histogram_global)");
  if (auto err =
          histogram(r, cx, table_id::events_statements_histogram_global, nullptr, statement_sums, statements))
    return err;
  if (!statements.histogram_points.empty()) out.push_back(std::move(statements));
  metric waits = make_metric(metric::kind::histogram, "perfschema.waits.latency", "s",
                             "Wait latency by event name (events_waits_histogram_global_by_event_name)");
  if (auto err = histogram(r, cx, table_id::events_waits_histogram_global_by_event_name, "event_name",
                           wait_sums, waits))
    return err;
  if (!waits.histogram_points.empty()) out.push_back(std::move(waits));

  // Gauges: the lost counters, threads, memory in use.
  metric lost = make_metric(metric::kind::gauge, "perfschema.lost", "{item}",
                            "What the agent could not record for lack of room (status *_lost)");
  {
    const int name = col(table_id::status, "variable_name"), value = col(table_id::status, "variable_value");
    if (auto err = scan(r, table_id::status, [&](const cell_view* c) {
          const std::string n = as_text(c[name]);
          if (n.ends_with("_lost"))
            lost.points.push_back(
                int_point(cx, {text_attribute("perfschema.counter", n)}, as_int(c[value]), false));
        }))
      return err;
  }
  out.push_back(std::move(lost));
  metric threads = make_metric(metric::kind::gauge, "perfschema.threads", "{thread}", "Instrumented threads");
  std::int64_t thread_count = 0;
  if (auto err = scan(r, table_id::threads, [&](const cell_view*) { ++thread_count; })) return err;
  threads.points.push_back(int_point(cx, {}, thread_count, false));
  out.push_back(std::move(threads));
  metric memory = make_metric(metric::kind::gauge, "perfschema.memory.used", "By",
                              "Memory in use by event name (memory_summary_global_by_event_name)");
  {
    const table_id t = table_id::memory_summary_global_by_event_name;
    const int name = col(t, "event_name"), used = col(t, "current_number_of_bytes_used");
    if (auto err = scan(r, t, [&](const cell_view* c) {
          const std::int64_t v = as_int(c[used]);
          if (v != 0 && memory.points.size() < o.max_series)
            memory.points.push_back(
                int_point(cx, {text_attribute("perfschema.event_name", as_text(c[name]))}, v, false));
        }))
      return err;
  }
  if (!memory.points.empty()) out.push_back(std::move(memory));
  if (auto err = program_metrics(r, cx, out)) return err;
  // The exporter's own losses (queue overflow), so the collector sees them.
  metric dropped = make_metric(metric::kind::sum, "perfschema.otlp.dropped", "{item}",
                               "Spans and metric points pfs_otlp dropped (its queue overflowed)");
  dropped.points.push_back(int_point(cx, {}, static_cast<std::int64_t>(own.items_dropped), true));
  out.push_back(std::move(dropped));
  return {};
}

}  // namespace pfs::otlp

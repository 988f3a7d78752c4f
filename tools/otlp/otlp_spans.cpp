#include "tools/otlp/otlp_spans.h"

#include <charconv>
#include <string>
#include <string_view>

namespace pfs::otlp {

namespace {

// splitmix64's finalizer: every input bit reaches every output bit.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t hash(const region_identity& region, std::uint64_t thread_id, std::uint64_t event_id,
                   std::uint64_t salt) {
  std::uint64_t h = mix(salt);
  for (std::uint64_t v : {region.pid, region.creation_time_ns, thread_id, event_id}) h = mix(h ^ v);
  return h;
}

void store(std::uint8_t* out, std::uint64_t v) {  // big-endian: the hex reads as the number
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
}

trace_id trace_from(std::uint64_t high, std::uint64_t low) {
  trace_id id{};
  store(id.data(), high);
  store(id.data() + 8, low);
  return id;
}

const ancestry_link* find_link(const region_events& events, std::uint64_t thread_id, std::uint64_t event_id) {
  auto t = events.ancestry.find(thread_id);
  if (t == events.ancestry.end()) return nullptr;
  auto e = t->second.find(event_id);
  return e == t->second.end() ? nullptr : &e->second;
}

// The nearest ancestor that is a span (0: none), the root of the chain, and the
// nearest event of the chain (itself included) that carries the caller's trace
// context.
struct lineage {
  std::uint64_t parent = 0;
  std::uint64_t root = 0;
  const ancestry_link* traced = nullptr;
};
lineage find_lineage(const region_events& events, const work_event& e) {
  lineage l;
  std::uint64_t id = e.nesting_event_id;
  l.root = e.event_id;
  // Bounded: a damaged region could hold a cycle.
  for (int depth = 0; id != 0 && depth < 256; ++depth) {
    l.root = id;
    const ancestry_link* link = find_link(events, e.thread_id, id);
    if (link == nullptr) {  // gone from the region: still the parent and the root
      if (l.parent == 0) l.parent = id;
      break;
    }
    if (l.parent == 0 && !link->short_wait) l.parent = id;
    if (l.traced == nullptr && link->has_trace) l.traced = link;
    id = link->nesting_event_id;
  }
  return l;
}

std::uint64_t unix_ns(const region_identity& region, std::int64_t picoseconds) {
  return region.creation_time_ns + static_cast<std::uint64_t>(picoseconds) / 1000;
}

void add_text(attributes& a, const char* key, std::string_view value) {
  if (!value.empty()) a.push_back(text_attribute(key, std::string(value)));
}

// SOURCE is "file:line": code.file.path and code.line.number.
void add_source(attributes& a, std::string_view source) {
  const std::size_t colon = source.rfind(':');
  long long line = 0;
  const std::string_view digits =
      colon == std::string_view::npos ? std::string_view() : source.substr(colon + 1);
  const char* end = digits.data() + digits.size();
  if (digits.empty() || std::from_chars(digits.data(), end, line).ptr != end) {
    add_text(a, "code.file.path", source);
    return;
  }
  a.push_back(text_attribute("code.file.path", std::string(source.substr(0, colon))));
  a.push_back(int_attribute("code.line.number", line));
}

void add_kind_attributes(const work_event& e, span& s) {
  attributes& a = s.attrs;
  switch (e.kind) {
    case event_kind::statement:
      add_text(a, "db.query.text", e.sql_text);
      add_text(a, "db.query.summary", e.digest_text);
      add_text(a, "db.namespace", e.current_schema);
      if (e.rows_sent >= 0) a.push_back(int_attribute("db.response.returned_rows", e.rows_sent));
      if (e.mysql_errno != 0) {
        const std::string code = std::to_string(e.mysql_errno);
        a.push_back(text_attribute("db.response.status_code", code));
        a.push_back(text_attribute("error.type", code));
        add_text(a, "perfschema.sqlstate", e.sqlstate);
        s.status_code = kStatusError;
        s.status_message = std::string(e.message_text);
      }
      break;
    case event_kind::transaction:
      add_text(a, "perfschema.transaction.state", e.state);
      add_text(a, "perfschema.transaction.isolation_level", e.isolation_level);
      add_text(a, "perfschema.transaction.access_mode", e.access_mode);
      break;
    case event_kind::wait:
      add_text(a, "perfschema.wait.object_type", e.object_type);
      add_text(a, "perfschema.wait.object_schema", e.object_schema);
      add_text(a, "perfschema.wait.object_name", e.object_name);
      add_text(a, "perfschema.wait.operation", e.operation);
      if (e.number_of_bytes >= 0)
        a.push_back(int_attribute("perfschema.wait.number_of_bytes", e.number_of_bytes));
      break;
    case event_kind::stage:
      break;
  }
}

}  // namespace

span_id make_span_id(const region_identity& region, std::uint64_t thread_id, std::uint64_t event_id) {
  span_id id{};
  std::uint64_t h = hash(region, thread_id, event_id, 1);
  if (h == 0) h = 1;  // an all-zero id is invalid
  store(id.data(), h);
  return id;
}

trace_id make_trace_id(const region_identity& region, std::uint64_t thread_id, std::uint64_t root_event_id) {
  trace_id id{};
  std::uint64_t high = hash(region, thread_id, root_event_id, 2);
  const std::uint64_t low = hash(region, thread_id, root_event_id, 3);
  if (high == 0 && low == 0) high = 1;
  store(id.data(), high);
  store(id.data() + 8, low);
  return id;
}

void build_spans(const region_events& events, std::size_t first, std::size_t count, std::vector<span>& out) {
  const region_identity& region = events.identity;
  out.reserve(out.size() + count);
  for (std::size_t i = first; i < first + count; ++i) {
    const work_event& e = events.completed[i];
    span s;
    const lineage l = find_lineage(events, e);
    s.id = make_span_id(region, e.thread_id, e.event_id);
    if (l.parent != 0) {
      s.has_parent = true;
      s.parent = make_span_id(region, e.thread_id, l.parent);
    }
    // The caller's trace context: of the event itself (a root then hangs under the
    // caller's span) or of the nearest ancestor that has one.
    if (e.has_trace) {
      s.trace = trace_from(e.trace_high, e.trace_low);
      if (!s.has_parent) {
        s.has_parent = true;
        store(s.parent.data(), e.parent_span);
      }
    } else if (l.traced != nullptr) {
      s.trace = trace_from(l.traced->trace_high, l.traced->trace_low);
    } else {
      s.trace = make_trace_id(region, e.thread_id, l.root);
    }
    s.name = std::string(e.name);
    s.start_unix_ns = unix_ns(region, e.timer_start);
    s.end_unix_ns = unix_ns(region, e.timer_end);
    s.attrs.reserve(12);
    s.attrs.push_back(int_attribute("thread.id", static_cast<std::int64_t>(e.thread_id)));
    if (auto n = events.thread_names.find(e.thread_id); n != events.thread_names.end())
      add_text(s.attrs, "thread.name", n->second);
    s.attrs.push_back(int_attribute("perfschema.event_id", static_cast<std::int64_t>(e.event_id)));
    add_source(s.attrs, e.source);
    add_kind_attributes(e, s);
    out.push_back(std::move(s));
  }
}

}  // namespace pfs::otlp

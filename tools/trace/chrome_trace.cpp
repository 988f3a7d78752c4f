#include "tools/trace/chrome_trace.h"

#include <cstdlib>

namespace pfs::trace {

namespace {

// Columns of events_waits_current, in the order of a trace line.
enum column : std::size_t {
  kThreadId = 0,
  kEventId = 1,
  kEndEventId = 2,
  kEventName = 3,
  kSource = 4,
  kTimerStart = 5,
  kTimerWait = 7,
  kObjectSchema = 9,
  kObjectName = 10,
  kIndexName = 11,
  kObjectType = 12,
  kNestingEventId = 14,
  kOperation = 16,
  kNumberOfBytes = 17,
  kBlockingThreadId = 19,
  kSignallingThreadId = 21,
  kColumns = 22,
};

bool unsigned_value(const sql_value& v, std::uint64_t& out) {
  if (!v || v->empty()) return false;
  char* end = nullptr;
  out = std::strtoull(v->c_str(), &end, 10);
  return *end == '\0';
}

}  // namespace

std::string json_string(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
  return out;
}

std::string micros(std::uint64_t picoseconds) {
  std::string frac = std::to_string(picoseconds % 1000000);
  return std::to_string(picoseconds / 1000000) + "." + std::string(6 - frac.size(), '0') + frac;
}

void chrome_writer::begin_event() {
  std::fputs(first_ ? "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n" : ",\n", out_);
  first_ = false;
}

void chrome_writer::thread_name(std::uint64_t thread_id, const std::string& name) {
  begin_event();
  std::fprintf(out_, R"({"ph":"M","name":"thread_name","pid":1,"tid":%llu,"args":{"name":%s}})",
               static_cast<unsigned long long>(thread_id), json_string(name).c_str());
}

bool chrome_writer::wait(const std::vector<sql_value>& v) {
  std::uint64_t thread_id = 0, event_id = 0, start = 0, duration = 0;
  if (v.size() != kColumns || !v[kEndEventId] || !unsigned_value(v[kThreadId], thread_id) ||
      !unsigned_value(v[kEventId], event_id) || !unsigned_value(v[kTimerStart], start) ||
      !unsigned_value(v[kTimerWait], duration) || !v[kEventName])
    return false;
  begin_event();
  std::string args = "\"event_id\":" + std::to_string(event_id);
  auto arg = [&](const char* name, std::size_t column, bool number) {
    const sql_value& value = v[column];
    if (!value) return;
    args += std::string(",\"") + name + "\":" + (number ? *value : json_string(*value));
  };
  arg("source", kSource, false);
  arg("operation", kOperation, false);
  arg("object_type", kObjectType, false);
  arg("object_schema", kObjectSchema, false);
  arg("object_name", kObjectName, false);
  arg("index_name", kIndexName, false);
  arg("number_of_bytes", kNumberOfBytes, true);
  arg("nesting_event_id", kNestingEventId, true);
  arg("blocking_thread_id", kBlockingThreadId, true);
  arg("signalling_thread_id", kSignallingThreadId, true);
  std::fprintf(out_, R"({"ph":"X","cat":"wait","name":%s,"pid":1,"tid":%llu,"ts":%s,"dur":%s,"args":{%s}})",
               json_string(*v[kEventName]).c_str(), static_cast<unsigned long long>(thread_id),
               micros(start).c_str(), micros(duration).c_str(), args.c_str());
  return true;
}

bool chrome_writer::finish() {
  if (first_) std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out_);
  std::fputs("\n]}\n", out_);
  return std::ferror(out_) == 0;
}

}  // namespace pfs::trace

// W3C Trace Context: the traceparent header a service received, parsed into the
// trace_context of a statement or transaction record (work_layout.h).
//   version "-" trace-id "-" parent-id "-" trace-flags, lower-case hex:
//   "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
// Version ff is invalid, so are an all-zero trace id or parent id; a version above
// 00 may carry more fields after the flags ("-..."), which are ignored.
#include "agent/provider/internal/work_internal.h"

namespace pfs::detail {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case is not valid traceparent
}

bool hex_number(const char* s, int digits, std::uint64_t& out) {
  out = 0;
  for (int i = 0; i < digits; ++i) {
    const int v = hex_value(s[i]);
    if (v < 0) return false;
    out = out << 4 | static_cast<std::uint64_t>(v);
  }
  return true;
}

}  // namespace

bool parse_traceparent(const char* text, trace_context& out) {
  if (text == nullptr) return false;
  // 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55 characters; reading stops at the first bad one,
  // so a shorter string (its NUL) fails before anything past it is read.
  std::uint64_t version = 0, high = 0, low = 0, parent = 0, flags = 0;
  if (!hex_number(text, 2, version) || version == 0xff || text[2] != '-' || !hex_number(text + 3, 16, high) ||
      !hex_number(text + 19, 16, low) || text[35] != '-' || !hex_number(text + 36, 16, parent) ||
      text[52] != '-' || !hex_number(text + 53, 2, flags))
    return false;
  if (text[55] != '\0' && (version == 0 || text[55] != '-')) return false;
  if ((high == 0 && low == 0) || parent == 0) return false;
  out.trace_id_high = high;
  out.trace_id_low = low;
  out.parent_span_id = parent;
  return true;
}

void store_trace_context(trace_context& field, const trace_context& value) {
  store_relaxed(field.trace_id_high, value.trace_id_high);
  store_relaxed(field.trace_id_low, value.trace_id_low);
  store_relaxed(field.parent_span_id, value.parent_span_id);
}

}  // namespace pfs::detail

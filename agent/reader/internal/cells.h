// Cells and values of the reader (internal): how region fields become cells —
// clamping to bigint, UTF-8 repair, bounded strings, statistics columns.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agent/reader/reader.h"
#include "agent/region/io_layout.h"
#include "agent/region/region_layout.h"
#include "agent/region/wide_sum.h"

namespace pfs::reader::detail {

using namespace pfs::layout;

inline constexpr int kAttempts = 4;  // copies of one record before it counts as torn
inline constexpr std::uint64_t kInt64Max =
    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
inline constexpr std::uint64_t kNoMin = std::numeric_limits<std::uint64_t>::max();
inline constexpr std::string_view kUnknownThreadClass = "thread/pfs/unknown";

__extension__ typedef unsigned __int128 u128;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// ---------------------------------------------------------------------------
// Value helpers

inline std::int64_t clamp64(std::uint64_t v) {
  return static_cast<std::int64_t>(v > kInt64Max ? kInt64Max : v);
}

// Cells are views: text either points at data that lives for the whole scan
// (class names, sources, constants: stable_text) or at the scan state's text slots,
// which hold it until the row has been handed to the sink (scan_state::text_cell).
using cell = cell_view;

// One row being built: slots reused from row to row.
struct row_builder {
  std::vector<cell> slots;
  std::size_t n = 0;
  void reserve(std::size_t) {}
  // Inline (a cell of every column of every row); growing is rare: slots are reused.
  void push_back(const cell& c) {
    if (n == slots.size()) [[unlikely]]
      grow();
    slots[n++] = c;
  }
  [[gnu::noinline]] void grow() { slots.resize(slots.size() < 16 ? 16 : 2 * slots.size()); }
};

inline cell null_cell() { return cell{}; }
inline cell int_cell(std::uint64_t v) {
  cell c;
  c.null = false;
  c.i = clamp64(v);
  return c;
}
inline cell int_cell_signed(std::int64_t v) {
  cell c;
  c.null = false;
  c.i = v;
  return c;
}
// A numeric cell: an unsigned 128-bit value.
inline cell wide_cell(wide_sum v) {
  cell c;
  c.null = false;
  c.i = static_cast<std::int64_t>(static_cast<std::uint64_t>(v));
  c.hi = static_cast<std::uint64_t>(v >> 64);
  return c;
}
inline cell nullable_int(std::uint64_t v) { return v == 0 ? null_cell() : int_cell(v); }
inline cell stable_text(std::string_view s) { return cell{false, 0, s, {}}; }
inline cell yes_no(bool v) { return stable_text(std::string_view(v ? "YES" : "NO")); }

// DIGEST: 32 bytes as 64 lower-case hex digits (MySQL 8.0's SHA-256 form).
inline std::string digest_hex(const std::uint8_t* d) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string s(64, '0');
  for (std::size_t i = 0; i < 32; ++i) {
    s[2 * i] = kHex[d[i] >> 4];
    s[2 * i + 1] = kHex[d[i] & 15];
  }
  return s;
}

inline std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? kNoMin : r;
}

// Appends n bytes as UTF-8, replacing every byte that does not start a valid sequence
// (overlong forms, surrogates and code points above U+10FFFF included) with '?'.
inline void append_utf8(std::string& out, const char* p, std::size_t n) {
  out.reserve(out.size() + n);
  std::size_t i = 0;
  while (i < n) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1Fu, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0Fu, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07u, min = 0x10000;
    }
    bool ok = len != 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto d = static_cast<unsigned char>(p[i + k]);
      if ((d & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (d & 0x3Fu);
    }
    if (ok && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (ok) {
      out.append(p + i, len);
      i += len;
    } else {
      out.push_back('?');
      ++i;
    }
  }
}

// A string field copied out of a live record: relaxed loads, bounded by the field
// (at most N - 1 bytes, stops at the first NUL).
template <std::size_t N>
struct fixed_str {
  char buf[N];
  std::size_t len = 0;
  void load(const char (&field)[N]) {
    std::size_t n = 0;
    for (; n + 1 < N; ++n) {
      const char c = load_relaxed(field[n]);
      if (c == '\0') break;
      buf[n] = c;
    }
    len = n;
  }
  bool empty() const { return len == 0; }
  std::string str() const {
    std::string s;
    append_utf8(s, buf, len);
    return s;
  }
};

// A file's name, which a rename may rewrite while the record stays allocated: it
// has a seqlock of its own (file_instance::name_seq). False if it kept changing.
inline bool load_file_name(const file_instance& f, fixed_str<kObjectNameLen>& name) {
  for (int a = 0; a < 4; ++a) {
    const std::uint32_t s1 = load_acquire(f.name_seq);
    if ((s1 & 1u) == 0) {
      name.load(f.name);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (load_relaxed(f.name_seq) == s1) return true;
    }
  }
  return false;
}

// A socket's IP and PORT, which bind and connect rewrite while the record stays
// allocated: a seqlock of their own (socket_instance::addr_seq), like a file's name.
inline bool load_socket_address(const socket_instance& s, fixed_str<kSocketIpLen>& ip, std::uint32_t& port) {
  for (int a = 0; a < 4; ++a) {
    const std::uint32_t s1 = load_acquire(s.addr_seq);
    if ((s1 & 1u) == 0) {
      ip.load(s.ip);
      port = load_relaxed(s.port);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (load_relaxed(s.addr_seq) == s1) return true;
    }
  }
  return false;
}

inline wait_stat load_stat(const wait_stat& s) { return load_wait_stat(s); }

inline wide_sum sum_of(const wait_stat& s) { return make_wide(s.sum, s.sum_hi); }
inline void set_sum(wait_stat& s, wide_sum v) {
  s.sum = static_cast<std::uint64_t>(v);
  s.sum_hi = static_cast<std::uint64_t>(v >> 64);
}

// Sums add exactly (2^128 ps is beyond any uptime); counts saturate.
inline void add_stat(wait_stat& into, const wait_stat& s) {
  into.count = sat_add(into.count, s.count);
  set_sum(into, sum_of(into) + sum_of(s));
  if (s.min < into.min) into.min = s.min;
  if (s.max > into.max) into.max = s.max;
}

// COUNT_STAR, SUM (numeric), MIN, AVG, MAX. AVG = SUM / COUNT is at most MAX, a
// single wait's time (uint64 ps, shown clamped to bigint as MAX is): it fits.
inline void append_stat_cells(row_builder& r, const wait_stat& s) {
  const wide_sum sum = sum_of(s);
  r.push_back(int_cell(s.count));
  r.push_back(wide_cell(sum));
  r.push_back(int_cell(s.min == kNoMin ? 0 : s.min));
  const wide_sum avg = s.count == 0 ? 0 : sum / s.count;
  r.push_back(int_cell(avg > kInt64Max ? kInt64Max : static_cast<std::uint64_t>(avg)));
  r.push_back(int_cell(s.max));
}

// ---------------------------------------------------------------------------
// File io and table io statistics

inline constexpr wait_stat kZeroStat{0, 0, kNoMin, 0, 0};
inline constexpr io_stat kZeroIo{0, 0, kNoMin, 0, 0, 0};
inline constexpr io_stats kZeroIoStats{kZeroIo, kZeroIo, kZeroIo};
inline constexpr table_io_stat kZeroTableIo{kZeroStat, kZeroStat, kZeroStat, kZeroStat};

// Combining groups: a group that counted nothing adds nothing (its min/max are not
// meaningful, whatever they hold).
inline void merge_stat(wait_stat& into, const wait_stat& s) {
  if (s.count != 0) add_stat(into, s);
}

inline io_stat load_io(const io_stat& s) {
  const wide_sum sum = load_sum(s);
  return io_stat{load_relaxed(s.count), static_cast<std::uint64_t>(sum),
                 load_relaxed(s.min),   load_relaxed(s.max),
                 load_relaxed(s.bytes), static_cast<std::uint64_t>(sum >> 64)};
}
inline io_stats load_io_stats(const io_stats& s) {
  return io_stats{load_io(s.read), load_io(s.write), load_io(s.misc)};
}

inline wait_stat timer_part(const io_stat& s) { return wait_stat{s.count, s.sum, s.min, s.max, s.sum_hi}; }

inline void merge_io(io_stat& into, const io_stat& s) {
  if (s.count == 0) return;
  into.count = sat_add(into.count, s.count);
  const wide_sum sum = make_wide(into.sum, into.sum_hi) + make_wide(s.sum, s.sum_hi);
  into.sum = static_cast<std::uint64_t>(sum);
  into.sum_hi = static_cast<std::uint64_t>(sum >> 64);
  into.bytes = sat_add(into.bytes, s.bytes);
  if (s.min < into.min) into.min = s.min;
  if (s.max > into.max) into.max = s.max;
}

inline void merge_io_stats(io_stats& into, const io_stats& s) {
  merge_io(into.read, s.read);
  merge_io(into.write, s.write);
  merge_io(into.misc, s.misc);
}

// STAR of a file: its read, write and misc groups together.
inline wait_stat io_star(const io_stats& s) {
  wait_stat star = kZeroStat;
  merge_stat(star, timer_part(s.read));
  merge_stat(star, timer_part(s.write));
  merge_stat(star, timer_part(s.misc));
  return star;
}

// STAR, READ, sum_number_of_bytes_read, WRITE, sum_number_of_bytes_write, MISC.
inline void append_io_cells(row_builder& r, const io_stats& s) {
  append_stat_cells(r, io_star(s));
  append_stat_cells(r, timer_part(s.read));
  r.push_back(int_cell(s.read.bytes));
  append_stat_cells(r, timer_part(s.write));
  r.push_back(int_cell(s.write.bytes));
  append_stat_cells(r, timer_part(s.misc));
}

inline table_io_stat load_table_io(const table_io_stat& s) {
  return table_io_stat{load_stat(s.fetch), load_stat(s.insert), load_stat(s.update), load_stat(s.del)};
}

inline void merge_table_io(table_io_stat& into, const table_io_stat& s) {
  merge_stat(into.fetch, s.fetch);
  merge_stat(into.insert, s.insert);
  merge_stat(into.update, s.update);
  merge_stat(into.del, s.del);
}

// STAR, READ (= FETCH), WRITE (= INSERT + UPDATE + DELETE), FETCH, INSERT, UPDATE, DELETE.
inline void append_table_io_cells(row_builder& r, const table_io_stat& s) {
  wait_stat read = kZeroStat;
  merge_stat(read, s.fetch);
  wait_stat write = kZeroStat;
  merge_stat(write, s.insert);
  merge_stat(write, s.update);
  merge_stat(write, s.del);
  wait_stat star = read;
  merge_stat(star, write);
  for (const wait_stat* g :
       std::initializer_list<const wait_stat*>{&star, &read, &write, &s.fetch, &s.insert, &s.update, &s.del})
    append_stat_cells(r, *g);
}

}  // namespace pfs::reader::detail

// Chrome trace-event JSON (the format Perfetto and chrome://tracing open) for the
// finished waits of trace files: one complete event ("ph":"X") per wait, on the
// track of its thread (pid 1, tid THREAD_ID), ts and dur in microseconds from
// TIMER_START and TIMER_WAIT (picoseconds, written exactly: 6 decimals), the
// object, source and operation as args. The viewer nests events of one track by
// time, so a table io wait holds the file and mutex waits it caused.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/trace/sql_values.h"

namespace pfs::trace {

class chrome_writer {
 public:
  explicit chrome_writer(std::FILE* out) : out_(out) {}
  // A track's name (metadata event "thread_name"), e.g. the actor of a file.
  void thread_name(std::uint64_t thread_id, const std::string& name);
  // One line's values; false (nothing written) unless it is a finished, timed wait.
  bool wait(const std::vector<sql_value>& values);
  // Closes the JSON; false on a write error.
  bool finish();

 private:
  void begin_event();
  std::FILE* out_;
  bool first_ = true;
};

// A JSON string literal of s (quotes included). Control characters and bytes
// above 0x7f come out as \u00XX (read as Latin-1), so the output always parses.
std::string json_string(const std::string& s);

// Picoseconds as microseconds with 6 decimals ("12.345678").
std::string micros(std::uint64_t picoseconds);

}  // namespace pfs::trace

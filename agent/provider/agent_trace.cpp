// Trace files (the trace worklog): every traced wait, at its start and at its end,
// as one line `INSERT INTO events_waits_current VALUES (...);` in a file of the
// thread's own, so no thread ever waits for another. Buffered, never synced ("you
// crash, you lose some of the trace"). Any create or write error disables tracing
// for the thread's actor (its setup_actors TRACE_ENABLED becomes 'NO') and counts
// in trace_errors; the application never sees it.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/io_path.h"
#include "agent/provider/internal/trace.h"
#include "agent/region/io_layout.h"
#include "agent/region/safe_files.h"
#include "agent/region/setup.h"

namespace pfs::detail {

std::string& trace_dir() {
  static std::string* const dir = new std::string;  // never destroyed: see last_error_text
  return *dir;
}
constinit bool g_trace_stopped = false;

namespace {

constexpr std::size_t kBufferSize = 64 * 1024;
constexpr std::size_t kMaxLine = 4096;  // longest line: a 511-byte file name escaped as \xHH, and the rest

// Formats one line into a buffer that has room for the longest line (kMaxLine),
// with bulk copies: this is the whole cost of tracing besides the write.
struct line_writer {
  char* p;
  void put(char c) { *p++ = c; }
  void put(const char* s, std::size_t n) {
    std::memcpy(p, s, n);
    p += n;
  }
  template <std::size_t N>
  void put(const char (&s)[N]) {
    put(s, N - 1);
  }
  void number(std::uint64_t v) { p = std::to_chars(p, p + 24, v).ptr; }
  void signed_number(std::int64_t v) {
    if (v < 0) {
      put('-');
      number(static_cast<std::uint64_t>(-(v + 1)) + 1);
    } else {
      number(static_cast<std::uint64_t>(v));
    }
  }
  void null() { put("NULL"); }
  void comma() { put(", "); }
  // A PostgreSQL string literal. Plain '...' (quotes doubled) unless the text has
  // a backslash or a control character: then E'...' with escapes, so a line
  // stays one line whatever a file name holds.
  void literal(const char* s, std::size_t cap) {
    const std::size_t n = strnlen(s, cap);
    bool special = false;  // one branch-free pass; the slow path sorts it out
    for (std::size_t i = 0; i < n; ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      special |= (c == '\'') | (c == '\\') | (c < 0x20) | (c == 0x7f);
    }
    bool escape = false;
    if (special)
      for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        escape |= c == '\\' || c < 0x20 || c == 0x7f;
      }
    if (!special) {
      put('\'');
      put(s, n);
      put('\'');
      return;
    }
    if (escape) put('E');
    put('\'');
    for (std::size_t i = 0; i < n; ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c == '\'') {
        put("''");
      } else if (escape && c == '\\') {
        put("\\\\");
      } else if (escape && (c < 0x20 || c == 0x7f)) {
        constexpr char kHex[] = "0123456789abcdef";
        put("\\x");
        put(kHex[c >> 4]);
        put(kHex[c & 15]);
      } else {
        put(static_cast<char>(c));
      }
    }
    put('\'');
  }
};

void sanitize(std::string& s) {
  for (char& c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-' || c == '.'))
      c = '_';
}

// The actor part of the file name: the names of the thread's actor that fit it
// (user, host, role), or "background".
std::string actor_name(const thread_record& r) {
  std::string out;
  for (const char* part : {r.user, r.host, r.role}) {
    std::string v(part, strnlen(part, kHostLen));
    if (v.empty() || v == "%") continue;
    if (!out.empty()) out += '_';
    out += v;
  }
  if (out.empty()) out = "background";
  sanitize(out);
  return out;
}

bool write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// An error: this thread stops tracing, and so does every thread of its actor.
void trace_failed(thread_context& t, trace_file& f) {
  f.failed = true;
  if (f.fd >= 0) ::close(f.fd);
  f.fd = -1;
  agent_state* a = g_agent;
  bump_lost(kTraceErrors);
  thread_record& r = *t.rec;
  const setup::actor_match m = setup::match_actor(a->region, r.user, r.host, r.role);
  if (m.row < 0) return;
  // Never wait for a setup writer here: if the lock is busy, the row's flag is
  // still cleared and the other threads stop at their next derived-flag update.
  auto& actor = a->region.array<actor_record>(kArraySetupActors)[m.row];
  store_relaxed(actor.trace_enabled, std::uint8_t{0});
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(kSetupLockByte);
  fl.l_len = 1;
  if (fcntl(a->region.fd(), F_OFD_SETLK, &fl) == 0) {
    setup::recompute_derived(a->region);
    fl.l_type = F_UNLCK;
    fcntl(a->region.fd(), F_OFD_SETLK, &fl);
  }
}

// Says once per process why a trace file was refused (the first refusal is
// enough to find the planted file; the rest count in trace_errors).
void say_refused(const std::string& path, const char* why) {
  static bool said = false;
  if (__atomic_exchange_n(&said, true, __ATOMIC_RELAXED)) return;
  const std::string line = "perfschema: not tracing into \"" + path + "\": " + why + "\n";
  [[maybe_unused]] const ssize_t w = ::write(2, line.data(), line.size());
}

// The trace file of a thread, opened so that a name planted by another user in the
// trace directory (a symbolic link, a hard link, a FIFO) is never written through
// (safe_files.h): a new file is created with O_EXCL; a file there already is
// truncated only if it is a regular file of ours with one link.
int open_trace_file(const std::string& dir, const std::string& name, bool allow_unsafe_dir) {
  const std::string path = dir + "/" + name;
  const int dir_fd = safe_files::open_directory(dir.c_str());
  if (dir_fd < 0) {
    if (errno == ELOOP || errno == ENOTDIR)
      say_refused(path, "its directory is a symbolic link or not a directory");
    return -1;
  }
  if (const char* unsafe = safe_files::unsafe_directory(dir_fd, allow_unsafe_dir)) {
    ::close(dir_fd);
    say_refused(path,
                (std::string("its directory is not safe: ") + unsafe + " (PFS_ALLOW_UNSAFE_DIR=1 allows it)")
                    .c_str());
    return -1;
  }
  const char* why = nullptr;
  int fd = openat(dir_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
  if (fd < 0 && errno == EEXIST) {
    // Looked at before it is opened: opening a FIFO or a device has effects.
    why = safe_files::unsafe_destination(dir_fd, name.c_str(), true);
    if (why == nullptr)
      fd = openat(dir_fd, name.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && why == nullptr && errno == ELOOP) why = "it is a symbolic link";  // swapped meanwhile
    if (fd >= 0 && (why = safe_files::unsafe_open_file(fd, true)) == nullptr && ftruncate(fd, 0) != 0)
      why = "it could not be truncated";
    if (why != nullptr && fd >= 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::close(dir_fd);
  if (why != nullptr) say_refused(path, why);
  return fd;
}

bool open_trace(thread_context& t, trace_file& f) {
  const std::string actor = actor_name(*t.rec);
  f.fd = open_trace_file(trace_dir(), "thread." + actor + "." + std::to_string(t.thread_id),
                         g_agent->allow_unsafe_dir);
  if (f.fd < 0) return false;
  f.buffer = new (std::nothrow) char[kBufferSize];
  if (f.buffer == nullptr) return false;
  f.used = 0;
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
  const int n = std::snprintf(f.buffer, kBufferSize, "/* perfschema trace file for %s on %s UTC */\n",
                              actor.c_str(), when);
  f.used = n > 0 ? static_cast<std::size_t>(n) : 0;
  return true;
}

std::uint64_t pico(std::uint8_t timer, std::uint64_t raw) { return absolute_pico(timer, raw); }

void format_event(line_writer& w, const wait_record& e) {
  const class_record& c = g_hot.classes[e.class_index - 1];
  w.put("INSERT INTO events_waits_current VALUES (");
  w.number(e.thread_id);
  w.comma();
  w.number(e.event_id);
  w.comma();
  if (e.end_event_id != 0)
    w.number(e.end_event_id);
  else
    w.null();
  w.comma();
  w.literal(c.name, kNameLen);
  w.comma();
  agent_state* a = g_agent;
  if (e.source_index != 0 && e.source_index <= a->source_count &&
      load_acquire(a->sources[e.source_index - 1].state) == kSourceReady)
    w.literal(a->sources[e.source_index - 1].text, kSourceLen);
  else
    w.null();
  w.comma();
  const bool ended = e.state == kWaitCompleted;
  if (e.timer != 0) {
    const std::uint64_t start = pico(e.timer, e.timer_start);
    w.number(start);
    w.comma();
    if (ended) {
      const std::uint64_t end = pico(e.timer, e.timer_end);
      w.number(end);
      w.comma();
      w.number(end > start ? end - start : 0);
    } else {
      w.put("NULL, NULL");
    }
  } else {
    w.put("NULL, NULL, NULL");
  }
  w.put(", NULL, ");  // SPINS
  // OBJECT_SCHEMA, OBJECT_NAME, INDEX_NAME, OBJECT_TYPE
  if (e.object_kind == kObjectFile && e.object_index != 0 && e.object_index <= g_io.file_count) {
    w.put("NULL, ");
    w.literal(g_io.files[e.object_index - 1].name, kObjectNameLen);
    w.put(", NULL, 'FILE'");
  } else if (e.object_kind == kObjectTable && e.object_index != 0 && e.object_index <= g_io.table_count) {
    const table_share& t = g_io.tables[e.object_index - 1];
    w.literal(t.schema, kObjectSchemaLen);
    w.comma();
    w.literal(t.name, kTableNameLen);
    w.comma();
    if (e.index_number != 0)
      w.literal(g_io.indexes[static_cast<std::uint64_t>(e.object_index - 1) * g_io.indexes_per_table +
                             e.index_number - 1]
                    .name,
                kIndexNameLen);
    else
      w.null();
    if (t.object_type == kObjectTypeTemporaryTable)
      w.put(", 'TEMPORARY TABLE'");
    else
      w.put(", 'TABLE'");
  } else {
    w.put("NULL, NULL, NULL, NULL");
  }
  w.comma();
  w.number(e.object_instance_begin);
  w.comma();
  if (e.nesting_event_id != 0) {
    w.number(e.nesting_event_id);
    w.put(", 'WAIT'");
  } else {
    w.put("NULL, NULL");
  }
  w.comma();
  if (const char* op = operation_name(e.operation))
    w.literal(op, 32);
  else
    w.null();
  w.comma();
  if (e.number_of_bytes >= 0)
    w.signed_number(e.number_of_bytes);
  else
    w.null();
  w.comma();
  w.number(e.flags);
  // BLOCKING_THREAD_ID, BLOCKING_EVENT_ID (lock waits), SIGNALLING_THREAD_ID
  // (condition waits): as the reader shows them (rows_waits.cpp, blocking_cells)
  w.comma();
  if (e.operation == kOpWait || e.operation == kOpTimedWait) {
    w.put("NULL, NULL, ");
    if (e.blocking_thread_id != 0)
      w.number(e.blocking_thread_id);
    else
      w.null();
  } else if (e.blocking_thread_id != 0) {
    w.number(e.blocking_thread_id);
    w.comma();
    if (e.blocking_event_id != 0)
      w.number(e.blocking_event_id);
    else
      w.null();
    w.put(", NULL");
  } else {
    w.put("NULL, NULL, NULL");
  }
  w.put(");\n");
}

}  // namespace

void trace_flush(trace_file& f) {
  if (f.fd < 0 || f.used == 0) return;
  if (!write_all(f.fd, f.buffer, f.used)) f.failed = true;
  f.used = 0;
}

void trace_close(trace_file& f) {
  trace_flush(f);
  if (f.fd >= 0) ::close(f.fd);
  f.fd = -1;
  delete[] f.buffer;
  f.buffer = nullptr;
}

void trace_discard(trace_file& f) {
  if (f.fd >= 0) ::close(f.fd);
  f.fd = -1;
  f.used = 0;
}

void trace_event(thread_context& t, const wait_record& e) {
  if (g_agent == nullptr || g_trace_stopped) return;
  trace_file& f = t.trace;
  if (f.failed) return;
  if (f.fd < 0 && !open_trace(t, f)) {
    trace_failed(t, f);
    return;
  }
  if (kBufferSize - f.used < kMaxLine) {
    trace_flush(f);
    if (f.failed) {
      trace_failed(t, f);
      return;
    }
  }
  line_writer w{f.buffer + f.used};
  format_event(w, e);
  f.used = static_cast<std::size_t>(w.p - f.buffer);
}

}  // namespace pfs::detail

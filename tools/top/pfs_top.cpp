// pfs_top: the top waits per second of an instrumented program, read through
// perfschema_fdw from PostgreSQL, refreshed like top(1). Every interval it reads
// events_waits_summary_global_by_event_name and events_statements_summary_by_digest
// and shows the growth since the previous read per second (count, time waited,
// average), with the lock waits running now (perfschema_create_views' lock_waits:
// without it the section says which call makes it). A program that exited (status:
// provider_alive 0) is said, with its pid, above the sections.
//
//   pfs_top [-h HOST] [-p PORT] [-U USER] [-d DB] [-s SCHEMA] [-S SYS_SCHEMA]
//           [-N TOP] [-i SECONDS] [-n ITERATIONS] [-b]
//
// Connection options and libpq's environment (PGHOST, PGPORT, ...) as psql. Without
// -b the screen is redrawn in place with ANSI escape codes; -b prints plain frames.
#include <libpq-fe.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "tools/top/top_options.h"
#include "tools/top/top_reads.h"
#include "tools/top/top_screen.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

PGconn* connect(const pfs::top::options& o) {
  std::vector<const char*> keys{"fallback_application_name"}, values{"pfs_top"};
  for (const auto& [key, value] : o.connection) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  return PQconnectdbParams(keys.data(), values.data(), 1);
}

std::string clock_text() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[16];
  std::strftime(buffer, sizeof buffer, "%H:%M:%S", &local);
  return buffer;
}

std::size_t terminal_width() {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

void show(const std::vector<std::string>& lines, bool batch) {
  std::string out;
  if (batch) {
    for (const auto& line : lines) out += line + "\n";
    out += "\n";
  } else {
    const std::size_t width = terminal_width();
    out = "\x1b[H";  // home; each line clears its rest, and the end clears below
    for (const auto& line : lines)
      out += (width > 0 && line.size() > width ? line.substr(0, width) : line) + "\x1b[K\n";
    out += "\x1b[J";
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool help = false;
  const auto options = pfs::top::parse_options(argc, argv, help);
  if (!options) return help ? 0 : 2;
  const pfs::top::options& o = *options;

  PGconn* db = connect(o);
  if (PQstatus(db) != CONNECTION_OK) {
    std::fprintf(stderr, "pfs_top: %s", PQerrorMessage(db));
    PQfinish(db);
    return 1;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  pfs::top::counters waits, statements;
  std::string error;
  if (!pfs::top::read_waits(db, o.schema, waits, error)) {
    std::fprintf(stderr, "pfs_top: %s\n", error.c_str());
    PQfinish(db);
    return 1;
  }
  pfs::top::read_statements(db, o.schema, statements, error);
  auto last = std::chrono::steady_clock::now();
  if (!o.batch) std::fputs("\x1b[2J", stdout);

  const std::string where = std::string(PQhost(db)) + ":" + PQport(db) + "/" + PQdb(db);
  for (int refresh = 1; g_stop == 0; ++refresh) {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
    if (g_stop != 0) break;
    pfs::top::counters waits_now, statements_now;
    pfs::top::frame f;
    if (!pfs::top::read_waits(db, o.schema, waits_now, f.waits_error) && PQstatus(db) != CONNECTION_OK) {
      std::fprintf(stderr, "pfs_top: %s\n", f.waits_error.c_str());
      PQfinish(db);
      return 1;
    }
    pfs::top::read_statements(db, o.schema, statements_now, f.statements_error);
    pfs::top::read_lock_waits(db, o.sys_schema, o.schema, o.top, f.lock_waits, f.lock_waits_error);
    f.exited = pfs::top::exited_program(db, o.schema);
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last).count();
    last = now;
    f.waits = pfs::top::top_rates(waits, waits_now, seconds, o.top);
    f.statements = pfs::top::top_rates(statements, statements_now, seconds, o.top);
    if (f.waits_error.empty()) waits = std::move(waits_now);
    if (f.statements_error.empty()) statements = std::move(statements_now);
    char header[256];
    std::snprintf(header, sizeof header, "pfs_top - %s  %s  schema %s  interval %.2f s  refresh %d",
                  clock_text().c_str(), where.c_str(), o.schema.c_str(), seconds, refresh);
    f.header = header;
    show(pfs::top::render(f), o.batch);
    if (o.iterations > 0 && refresh >= o.iterations) break;
  }
  PQfinish(db);
  return 0;
}

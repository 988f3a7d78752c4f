// pfs_top: a live view of an instrumented program, read through perfschema_fdw
// from PostgreSQL, interactive like top(1) (ncurses; keys in top_keys.cpp) or in
// batch mode (-b -n N --view V: plain text). Seven views (top_views.cpp): waits,
// lock waits with their holders, statements by digest, files, threads, the
// processes of a region directory, memory; Enter shows a row's detail.
//
//   pfs_top [-h HOST] [-p PORT] [-U USER] [-d DB] [-s SCHEMA] [-S SYS_SCHEMA]
//           [-N TOP] [-i SECONDS] [-n ITERATIONS] [-b] [-v VIEW]
//
// Connection options and libpq's environment (PGHOST, PGPORT, ~/.pgpass...) as psql.
#include <curses.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>

#include "tools/top/top_batch.h"
#include "tools/top/top_keys.h"
#include "tools/top/top_options.h"
#include "tools/top/top_screen.h"
#include "tools/top/top_source.h"

namespace {

volatile int g_stop = 0;

void on_signal(int) { g_stop = 1; }

using clock_type = std::chrono::steady_clock;

// The raw refresh filtered and sorted as the keys say; the cursor kept on the rows.
void derive(pfs::top::ui_state& s) {
  s.last = s.raw;
  pfs::top::filter_and_sort(s.last.rows, s.filter, pfs::top::sort_column_of(s), s.reversed);
  const int rows = static_cast<int>(s.last.rows.rows.size());
  if (s.selected >= rows) s.selected = rows > 0 ? rows - 1 : 0;
}

int run_screen(const pfs::top::options& o, pfs::top::source& db) {
  pfs::top::ui_state s;
  s.current = pfs::top::find_view(o.view);
  s.interval = o.interval;
  pfs::top::screen_open();
  int refreshes = 0;
  auto read = [&] {
    s.raw = db.refresh(*s.current);
    derive(s);
  };
  read();  // the baseline of the rates
  auto next = clock_type::now() +
              std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(s.interval));
  while (g_stop == 0) {
    pfs::top::draw(s, pfs::top::header_line(o, db, *s.current, s.raw.seconds, refreshes));
    const auto now = clock_type::now();
    const long wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count();
    timeout(static_cast<int>(std::clamp(wait_ms, 0L, 200L)));
    const int key = getch();
    if (key == ERR) {
      if (clock_type::now() < next) continue;
      next = clock_type::now() +
             std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(s.interval));
      if (s.paused || s.detail_open || s.help) continue;
      read();
      ++refreshes;
      if (o.iterations > 0 && refreshes >= o.iterations) break;
      continue;
    }
    switch (pfs::top::on_key(s, key)) {
      case pfs::top::action::quit:
        g_stop = 1;
        break;
      case pfs::top::action::refresh:
        read();
        next = clock_type::now() +
               std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(s.interval));
        break;
      case pfs::top::action::detail:
        if (!s.last.rows.rows.empty()) {
          const std::string& key_text = s.last.rows.rows[static_cast<std::size_t>(s.selected)].key;
          s.detail_error.clear();
          s.detail = {};
          if (s.current->detail_title.empty())
            s.detail_error = "no detail for this view";
          else
            db.detail(*s.current, key_text, s.detail, s.detail_error);
          s.detail_title = "detail of " + key_text + ": " + s.current->detail_title;
          s.detail_open = true;
        }
        break;
      case pfs::top::action::redraw:
        derive(s);
        break;
      case pfs::top::action::none:
        break;
    }
  }
  pfs::top::screen_close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool help = false;
  const auto options = pfs::top::parse_options(argc, argv, help);
  if (!options) return help ? 0 : 2;
  if (options->print_sql) {
    std::printf("%s;\n",
                pfs::top::view_sql(*pfs::top::find_view(options->view), options->schema, options->sys_schema)
                    .c_str());
    return 0;
  }
  pfs::top::source db(*options);
  std::string error;
  if (!db.connect(error) && options->batch) {
    std::fprintf(stderr, "pfs_top: %s\n", error.c_str());
    return 1;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  return options->batch ? pfs::top::run_batch(*options, db, g_stop) : run_screen(*options, db);
}

// pfs_trace_merge [--format=sql|chrome] DIR: merges the per-thread trace files
// (thread.<actor>.<id>) of a directory into one stream on standard output, ordered
// by TIMER_START (EVENT_ID counts per thread, so it cannot order threads against
// each other). Lines of one file keep their order; an untimed line (TIMER_START
// NULL) keeps the place of the line before it in its file. With --format=sql (the
// default) the output loads with psql like the inputs; with --format=chrome it is
// Chrome trace-event JSON for Perfetto or chrome://tracing (tools/trace/chrome_trace.h):
// a track per thread, a complete event per finished wait.
#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <queue>
#include <string>
#include <vector>

#include "tools/trace/chrome_trace.h"
#include "tools/trace/sql_values.h"

namespace {

struct source {
  std::ifstream in;
  std::string line;
  std::int64_t key = -1;
  std::size_t order = 0;  // file order, the tie-break
};

// Moves p past one SQL value: a number, NULL, '...' (quotes doubled) or E'...'
// (backslash escapes). False if the line ends first.
bool skip_value(const std::string& line, std::size_t& p) {
  bool escapes = false;
  if (p + 1 < line.size() && line[p] == 'E' && line[p + 1] == '\'') {
    escapes = true;
    ++p;
  }
  if (p < line.size() && line[p] == '\'') {
    for (++p; p < line.size(); ++p) {
      if (escapes && line[p] == '\\') {
        ++p;
      } else if (line[p] == '\'') {
        if (p + 1 < line.size() && line[p + 1] == '\'') {
          ++p;
        } else {
          ++p;
          return true;
        }
      }
    }
    return false;
  }
  while (p < line.size() && line[p] != ',' && line[p] != ')') ++p;
  return p < line.size();
}

// TIMER_START is the 6th value of "INSERT INTO ... VALUES (v1, v2, ...);".
bool timer_start(const std::string& line, std::int64_t& out) {
  std::size_t p = line.find("VALUES (");
  if (p == std::string::npos) return false;
  p += 8;
  for (int field = 0; field < 5; ++field) {
    if (!skip_value(line, p) || line.compare(p, 2, ", ") != 0) return false;
    p += 2;
  }
  if (line.compare(p, 4, "NULL") == 0) return false;
  out = std::strtoll(line.c_str() + p, nullptr, 10);
  return true;
}

bool advance(source& s) {
  while (std::getline(s.in, s.line)) {
    if (s.line.rfind("/*", 0) == 0 || s.line.empty()) continue;  // headers
    std::int64_t k;
    if (timer_start(s.line, k)) s.key = k;
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  bool chrome = false;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--format=chrome") {
      chrome = true;
    } else if (a == "--format=sql") {
      chrome = false;
    } else if (dir.empty() && !a.starts_with("-")) {
      dir = a;
    } else {
      dir.clear();
      break;
    }
  }
  if (dir.empty()) {
    std::fprintf(stderr, "usage: pfs_trace_merge [--format=sql|chrome] DIR\n");
    return 2;
  }
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    std::perror(("pfs_trace_merge: " + dir).c_str());
    return 1;
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(d))
    if (std::string(e->d_name).rfind("thread.", 0) == 0) names.push_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());

  std::vector<source> sources(names.size());
  auto later = [&](std::size_t a, std::size_t b) {
    if (sources[a].key != sources[b].key) return sources[a].key > sources[b].key;
    return sources[a].order > sources[b].order;
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> heap(later);
  for (std::size_t i = 0; i < names.size(); ++i) {
    sources[i].in.open(dir + "/" + names[i]);
    sources[i].order = i;
    if (!sources[i].in) {
      std::fprintf(stderr, "pfs_trace_merge: cannot read %s/%s\n", dir.c_str(), names[i].c_str());
      return 1;
    }
    if (advance(sources[i])) heap.push(i);
  }
  pfs::trace::chrome_writer json(stdout);
  if (chrome) {
    for (const std::string& name : names) {  // thread.<actor>.<thread id>
      const std::size_t dot = name.rfind('.');
      const std::uint64_t thread_id = std::strtoull(name.c_str() + dot + 1, nullptr, 10);
      json.thread_name(thread_id, name.substr(7, dot - 7) + " " + name.substr(dot + 1));
    }
  } else {
    std::printf("/* perfschema trace of %zu threads from %s, ordered by TIMER_START */\n", names.size(),
                dir.c_str());
  }
  std::vector<pfs::trace::sql_value> values;
  while (!heap.empty()) {
    const std::size_t i = heap.top();
    heap.pop();
    if (!chrome) {
      std::fputs(sources[i].line.c_str(), stdout);
      std::fputc('\n', stdout);
    } else if (pfs::trace::parse_insert_values(sources[i].line, values)) {
      json.wait(values);  // start lines and untimed waits write nothing
    }
    if (advance(sources[i])) heap.push(i);
  }
  if (chrome && !json.finish()) return 1;
  return std::ferror(stdout) ? 1 : 0;
}

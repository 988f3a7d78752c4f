// pfs_trace_merge DIR: merges the per-thread trace files (thread.<actor>.<id>) of a
// directory into one stream on standard output, ordered by TIMER_START (EVENT_ID
// counts per thread, so it cannot order threads against each other). Lines of one
// file keep their order; an untimed line (TIMER_START NULL) keeps the place of
// the line before it in its file. The output loads with psql like the inputs.
#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <queue>
#include <string>
#include <vector>

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
  if (argc != 2) {
    std::fprintf(stderr, "usage: pfs_trace_merge DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
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
  std::printf("/* perfschema trace of %zu threads from %s, ordered by TIMER_START */\n", names.size(), dir.c_str());
  while (!heap.empty()) {
    const std::size_t i = heap.top();
    heap.pop();
    std::fputs(sources[i].line.c_str(), stdout);
    std::fputc('\n', stdout);
    if (advance(sources[i])) heap.push(i);
  }
  return std::ferror(stdout) ? 1 : 0;
}

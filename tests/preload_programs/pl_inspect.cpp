// Prints tables of a region as tab-separated rows (header first), for the preload
// check script and for looking at what the interposer recorded:
//   pl_inspect <region> <table> [substring]   rows whose text contains substring
#include <cstdio>
#include <cstring>
#include <string>

#include "agent/reader/reader.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: pl_inspect <region> <table> [substring]\n");
    return 2;
  }
  pfs::region_error err;
  auto reader = pfs::reader::region_reader::open(argv[1], false, err);
  if (!reader) {
    std::fprintf(stderr, "pl_inspect: %s\n", err.message.c_str());
    return 1;
  }
  const pfs::reader::table_def* t = pfs::reader::find_table(argv[2]);
  if (t == nullptr) {
    std::fprintf(stderr, "pl_inspect: no table %s\n", argv[2]);
    return 2;
  }
  std::vector<pfs::reader::row> rows;
  if (auto e = reader->scan(*t, rows)) {
    std::fprintf(stderr, "pl_inspect: %s\n", e.message.c_str());
    return 1;
  }
  std::string line;
  for (std::size_t c = 0; c < t->columns.size(); ++c)
    line += (c ? "\t" : "") + std::string(t->columns[c].name);
  std::printf("%s\n", line.c_str());
  for (const auto& r : rows) {
    line.clear();
    for (std::size_t c = 0; c < r.size(); ++c) {
      if (c) line += '\t';
      const auto& cell = r[c];
      if (cell.null)
        line += "NULL";
      else if (t->columns[c].type == pfs::reader::column_type::int64)
        line += std::to_string(cell.i);
      else
        line += cell.s;
    }
    if (argc > 3 && line.find(argv[3]) == std::string::npos) continue;
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

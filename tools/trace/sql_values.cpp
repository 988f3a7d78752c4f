#include "tools/trace/sql_values.h"

#include <cstddef>

namespace pfs::trace {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A quoted literal starting at line[p] == '\''; p ends past the closing quote.
bool literal(const std::string& line, std::size_t& p, bool escapes, std::string& out) {
  for (++p; p < line.size(); ++p) {
    const char c = line[p];
    if (escapes && c == '\\') {
      if (++p >= line.size()) return false;
      const char e = line[p];
      if (e == 'x' && p + 2 < line.size() && hex_digit(line[p + 1]) >= 0 && hex_digit(line[p + 2]) >= 0) {
        out.push_back(static_cast<char>(hex_digit(line[p + 1]) * 16 + hex_digit(line[p + 2])));
        p += 2;
      } else if (e == 'n') {
        out.push_back('\n');
      } else if (e == 't') {
        out.push_back('\t');
      } else if (e == 'r') {
        out.push_back('\r');
      } else {
        out.push_back(e);
      }
    } else if (c == '\'') {
      if (p + 1 < line.size() && line[p + 1] == '\'') {
        out.push_back('\'');
        ++p;
      } else {
        ++p;
        return true;
      }
    } else {
      out.push_back(c);
    }
  }
  return false;
}

}  // namespace

bool parse_insert_values(const std::string& line, std::vector<sql_value>& out) {
  out.clear();
  std::size_t p = line.find("VALUES (");
  if (p == std::string::npos) return false;
  p += 8;
  for (;;) {
    if (line.compare(p, 4, "NULL") == 0) {
      out.emplace_back(std::nullopt);
      p += 4;
    } else {
      std::string v;
      const bool escapes = line.compare(p, 2, "E'") == 0;
      if (escapes) ++p;
      if (p < line.size() && line[p] == '\'') {
        if (!literal(line, p, escapes, v)) return false;
      } else {
        while (p < line.size() && line[p] != ',' && line[p] != ')') v.push_back(line[p++]);
        if (v.empty()) return false;
      }
      out.emplace_back(std::move(v));
    }
    if (line.compare(p, 2, ", ") == 0) {
      p += 2;
    } else {
      return line.compare(p, 2, ");") == 0;
    }
  }
}

}  // namespace pfs::trace

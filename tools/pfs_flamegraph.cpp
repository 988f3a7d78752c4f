// pfs_flamegraph: folded stacks on standard input ("frame;frame;...;frame VALUE"
// per line, as perfschema_folded_waits() gives them, or flamegraph.pl's input)
// become a flame graph on standard output: an SVG any browser opens, one box per
// frame, its width the share of VALUE (picoseconds of waiting) below it, its
// tooltip the name, the time and the share.
//
//   psql -At -c "SELECT stack || ' ' || picoseconds FROM perfschema_folded_waits('ps')" |
//     build/tools/pfs_flamegraph --title="Waits of my program" > waits.svg
//
// Lines that do not parse are counted and skipped (said on standard error).
// perfschema_folded_waits() leaves out the waits whose stage, statement or outer
// wait the histories no longer hold, so that a code path never shows at two depths
// (thread;wait, thread;stage;wait, thread;statement;stage;wait); its notice, on
// psql's standard error, says how many.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "tools/format/pico_time.h"

namespace {

struct frame {
  double value = 0;                                        // picoseconds of the stacks through this frame
  std::map<std::string, std::unique_ptr<frame>> children;  // ordered by name, as flamegraph.pl
};

constexpr double kWidth = 1200;
constexpr double kFrameHeight = 16;
constexpr double kMargin = 10;
constexpr double kTitleHeight = 30;
constexpr double kMinWidth = 0.1;  // narrower boxes are left out

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Warm colours, stable per name (FNV-1a), as flamegraph.pl's "hot" palette.
std::string colour(std::string_view name) {
  std::uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  const unsigned r = 205 + h % 50, g = (h >> 8) % 230, b = (h >> 16) % 55;
  char buf[32];
  std::snprintf(buf, sizeof buf, "rgb(%u,%u,%u)", r, g, b);
  return buf;
}

int depth_of(const frame& f) {
  int d = 0;
  for (const auto& [name, child] : f.children) d = std::max(d, 1 + depth_of(*child));
  return d;
}

// Writes the children of f from x, one row above y (the root's row is the bottom).
void write_frames(const frame& f, double x, double y, double scale, double total) {
  for (const auto& [name, child] : f.children) {
    const double w = child->value * scale;
    if (w >= kMinWidth) {
      const double top = y - kFrameHeight;
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.2f%%", 100.0 * child->value / total);
      std::printf("<g><title>%s (%s, %s)</title>", xml_escape(name).c_str(),
                  pfs::tools::format_pico(child->value).c_str(), pct);
      std::printf("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" rx=\"2\"/>", x, top,
                  w, kFrameHeight - 1, colour(name).c_str());
      // As many characters as fit (about 7 px each at font size 12).
      const auto fit = static_cast<std::size_t>(std::max(0.0, (w - 6) / 7));
      if (fit >= 3) {
        std::string label = name.size() <= fit ? name : name.substr(0, fit - 2) + "..";
        std::printf("<text x=\"%.1f\" y=\"%.1f\">%s</text>", x + 3, top + kFrameHeight - 4,
                    xml_escape(label).c_str());
      }
      std::printf("</g>\n");
      write_frames(*child, x, top, scale, total);
    }
    x += w;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string title = "Waiting time";
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.starts_with("--title=")) {
      title = std::string(a.substr(8));
    } else {
      std::fprintf(stderr,
                   "usage: pfs_flamegraph [--title=TEXT] < folded > graph.svg\n"
                   "folded: \"frame;...;frame VALUE\" lines, as perfschema_folded_waits() gives them: it\n"
                   "leaves out the waits whose stage, statement or outer wait the histories no\n"
                   "longer hold (a notice says how many), so that a code path shows at one\n"
                   "depth only\n");
      return 2;
    }
  }
  frame root;
  std::string line;
  std::uint64_t bad = 0, lines = 0;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    const std::size_t space = line.find_last_of(' ');
    char* end = nullptr;
    const double value = space == std::string::npos ? -1 : std::strtod(line.c_str() + space + 1, &end);
    if (space == std::string::npos || space == 0 || end == line.c_str() + space + 1 || *end != '\0' ||
        !(value >= 0) || !std::isfinite(value)) {
      ++bad;
      continue;
    }
    ++lines;
    root.value += value;
    frame* f = &root;
    std::string_view stack(line.data(), space);
    while (!stack.empty()) {
      const std::size_t semi = stack.find(';');
      const std::string_view name = stack.substr(0, semi);
      auto& child = f->children[std::string(name)];
      if (!child) child = std::make_unique<frame>();
      child->value += value;
      f = child.get();
      stack = semi == std::string_view::npos ? std::string_view() : stack.substr(semi + 1);
    }
  }
  if (bad != 0)
    std::fprintf(stderr, "pfs_flamegraph: %llu lines skipped (not \"stack value\")\n",
                 static_cast<unsigned long long>(bad));

  const int depth = depth_of(root);
  const double height = kTitleHeight + depth * kFrameHeight + 2 * kMargin + 20;
  std::printf("<?xml version=\"1.0\" standalone=\"no\"?>\n");
  std::printf(
      "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
      "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"Verdana, sans-serif\" font-size=\"12\">\n",
      kWidth, height, kWidth, height);
  std::printf("<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n");
  std::printf("<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" font-size=\"16\">%s</text>\n", kWidth / 2,
              kMargin + 14, xml_escape(title).c_str());
  std::printf("<text x=\"%.0f\" y=\"%.0f\" fill=\"#555\">%llu stacks, %s in all</text>\n", kMargin,
              height - kMargin, static_cast<unsigned long long>(lines),
              pfs::tools::format_pico(root.value).c_str());
  if (root.value > 0) {
    const double scale = (kWidth - 2 * kMargin) / root.value;
    write_frames(root, kMargin, height - kMargin - 20, scale, root.value);
  }
  std::printf("</svg>\n");
  return 0;
}

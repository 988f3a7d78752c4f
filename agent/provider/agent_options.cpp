// Start-up options: PFS_* environment variables and MySQL-style instrument rules.
#include <strings.h>

#include <cstdlib>
#include <cstring>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/region_retention.h"

namespace pfs {
namespace {

std::string trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return {};
  std::size_t e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}

void append_error(std::string* error, const std::string& text) {
  if (error == nullptr) return;
  if (!error->empty()) *error += "; ";
  *error += text;
}

}  // namespace

bool like_match(const char* pattern, const char* text) {
  // Iterative LIKE with backtracking to the last '%'.
  const char* star = nullptr;
  const char* resume = nullptr;
  while (*text != '\0') {
    if (*pattern == '%') {
      star = pattern++;
      resume = text;
    } else if (*pattern == '_' || *pattern == *text) {
      ++pattern;
      ++text;
    } else if (star != nullptr) {
      pattern = star + 1;
      text = ++resume;
    } else {
      return false;
    }
  }
  while (*pattern == '%') ++pattern;
  return *pattern == '\0';
}

bool parse_instrument_rules(const std::string& text, std::vector<instrument_rule>& out, std::string& error) {
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string entry = trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (entry.empty()) continue;
    std::size_t eq = entry.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      error = "instrument rule \"" + entry + "\" is not of the form pattern=ON|OFF|COUNTED";
      return false;
    }
    instrument_rule rule;
    rule.pattern = trim(entry.substr(0, eq));
    std::string value = trim(entry.substr(eq + 1));
    const char* v = value.c_str();
    if (!strcasecmp(v, "ON") || !strcasecmp(v, "YES") || !strcasecmp(v, "TRUE") || value == "1") {
      rule.enabled = rule.timed = true;
    } else if (!strcasecmp(v, "OFF") || !strcasecmp(v, "NO") || !strcasecmp(v, "FALSE") || value == "0") {
      rule.enabled = rule.timed = false;
    } else if (!strcasecmp(v, "COUNTED")) {
      rule.enabled = true;
      rule.timed = false;
    } else {
      error = "instrument rule \"" + entry + "\" has value \"" + value + "\"; use ON, OFF or COUNTED";
      return false;
    }
    out.push_back(std::move(rule));
  }
  return true;
}

const instrument_rule* match_rule(const std::vector<instrument_rule>& rules, const std::string& name) {
  const instrument_rule* best = nullptr;
  for (const auto& r : rules) {
    // Longest pattern wins; among equals, the later one (as a later option would).
    if (like_match(r.pattern.c_str(), name.c_str()) &&
        (best == nullptr || r.pattern.size() >= best->pattern.size()))
      best = &r;
  }
  return best;
}

options options::from_environment(std::string* error) {
  options o;
  if (const char* p = std::getenv("PFS_REGION")) o.region_path = p;
  std::string bad;
  o.sizes.apply_environment(&bad);
  if (!bad.empty()) append_error(error, "ignored malformed sizes: " + bad);
  if (const char* m = std::getenv("PFS_REGION_MODE")) {
    char* end = nullptr;
    unsigned long mode = std::strtoul(m, &end, 8);
    if (*m != '\0' && *end == '\0' && mode <= 0777)
      o.mode = static_cast<unsigned>(mode);
    else
      append_error(error, std::string("ignored malformed PFS_REGION_MODE=") + m);
  }
  if (const char* v = std::getenv("PFS_REGION_GROUP")) o.group = v;
  if (const char* v = std::getenv("PFS_INSTRUMENT")) o.instrument = v;
  if (const char* v = std::getenv("PFS_CONSUMERS")) o.consumers = v;
  if (const char* v = std::getenv("PFS_WAIT_TIMER")) o.wait_timer = v;
  if (const char* v = std::getenv("PFS_REMOVE_REGION_AT_EXIT")) o.remove_at_exit = std::strcmp(v, "1") == 0;
  if (const char* v = std::getenv("PFS_TRACE_DIR")) o.trace_dir = v;
  if (const char* v = std::getenv("PFS_TRACE_ALL")) o.trace_all = std::strcmp(v, "1") == 0;
  if (const char* v = std::getenv("PFS_ALLOW_UNSAFE_DIR")) o.allow_unsafe_dir = std::strcmp(v, "1") == 0;
  if (const char* v = std::getenv("PFS_REGION_KEEP")) {
    if (!detail::parse_keep_duration(v, &o.region_keep_ns))
      append_error(error,
                   std::string("ignored malformed PFS_REGION_KEEP=") + v + " (e.g. 600, 10min, 2h, 1d)");
  }
  if (const char* v = std::getenv("PFS_REGION_KEEP_COUNT")) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(v, &end, 10);
    if (*v != '\0' && *end == '\0' && n <= 1000000)
      o.region_keep_count = static_cast<std::uint32_t>(n);
    else
      append_error(error, std::string("ignored malformed PFS_REGION_KEEP_COUNT=") + v + " (0 to 1000000)");
  }
  if (const char* v = std::getenv("PFS_TIMER_WATCH")) {
    if (!strcasecmp(v, "auto"))
      o.cycle_watch = -1;
    else if (!strcasecmp(v, "on") || !strcmp(v, "1"))
      o.cycle_watch = 1;
    else if (!strcasecmp(v, "off") || !strcmp(v, "0"))
      o.cycle_watch = 0;
    else
      append_error(error, std::string("ignored malformed PFS_TIMER_WATCH=") + v + " (auto, on or off)");
  }
  if (const char* v = std::getenv("PFS_TIMER_WATCH_INTERVAL_MS")) {
    char* end = nullptr;
    const unsigned long ms = std::strtoul(v, &end, 10);
    if (*v != '\0' && *end == '\0' && ms >= 10 && ms <= 60000)
      o.cycle_watch_interval_ms = static_cast<unsigned>(ms);
    else
      append_error(error,
                   std::string("ignored malformed PFS_TIMER_WATCH_INTERVAL_MS=") + v + " (10 to 60000)");
  }
  return o;
}

}  // namespace pfs

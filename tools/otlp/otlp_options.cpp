#include "tools/otlp/otlp_options.h"

#include <cstdlib>
#include <cstring>

namespace pfs::otlp {

const char kUsage[] =
    "usage: pfs_otlp --region PATH [--once] [--interval SECONDS] [--endpoint URL]\n"
    "                [--traces-endpoint URL] [--metrics-endpoint URL]\n"
    "                [--protocol http/protobuf|http/json] [--compression gzip|none]\n"
    "                [--header K=V]... [--timeout MS] [--service-name NAME]\n"
    "                [--resource-attributes K=V,...] [--min-wait DURATION] [--state PATH]\n"
    "                [--signals traces,metrics] [--max-batch SPANS] [--max-queue REQUESTS]\n"
    "                [--per-thread] [--per-digest] [--max-series N] [--output FILE]\n"
    "                [--max-attempts N] [--initial-backoff MS]\n"
    "Exports a perfschema region (or a directory of regions) over OTLP/HTTP: the\n"
    "history_long tables' transactions, statements, stages and waits of at least\n"
    "--min-wait (default 1ms) as spans, the "
    "summaries and histograms as metrics.\nEnvironment: OTEL_EXPORTER_OTLP_ENDPOINT,\n"
    "OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL,\n"
    "OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_EXPORTER_OTLP_COMPRESSION,\n"
    "OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES (options override them).\n";

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string trim(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::string signal_url(const std::string& base, const char* signal) {
  std::string b = base;
  while (!b.empty() && b.back() == '/') b.pop_back();
  return b + "/v1/" + signal;
}

bool set_protocol(const std::string& p, options& o, std::string& error) {
  if (p == "http/protobuf") {
    o.json = false;
  } else if (p == "http/json") {
    o.json = true;
  } else {
    error = "unsupported protocol '" + p + "' (http/protobuf or http/json; grpc is not supported)";
    return false;
  }
  return true;
}

bool set_compression(const std::string& c, options& o, std::string& error) {
  if (c == "gzip") {
    o.gzip = true;
  } else if (c == "none" || c.empty()) {
    o.gzip = false;
  } else {
    error = "unsupported compression '" + c + "' (gzip or none)";
    return false;
  }
  return true;
}

bool positive_number(const std::string& s, double& out) {
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0' && out > 0;
}

}  // namespace

bool parse_key_values(const std::string& text, std::vector<std::pair<std::string, std::string>>& out) {
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    if (!trim(item).empty()) {
      const std::size_t eq = item.find('=');
      if (eq == std::string::npos || trim(item.substr(0, eq)).empty()) return false;
      out.emplace_back(trim(item.substr(0, eq)), percent_decode(trim(item.substr(eq + 1))));
    }
    start = comma + 1;
  }
  return true;
}

bool parse_duration_ps(const std::string& text, std::uint64_t& out) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || v < 0) return false;
  const std::string unit = end;
  double scale = 0;
  if (unit.empty() || unit == "ms")
    scale = 1e9;
  else if (unit == "s")
    scale = 1e12;
  else if (unit == "us")
    scale = 1e6;
  else if (unit == "ns")
    scale = 1e3;
  else
    return false;
  out = static_cast<std::uint64_t>(v * scale);
  return true;
}

bool parse_options(int argc, char** argv, options& o, std::string& error, bool& help) {
  help = false;
  // The environment first.
  if (const std::string base = env("OTEL_EXPORTER_OTLP_ENDPOINT"); !base.empty()) {
    o.traces_endpoint = signal_url(base, "traces");
    o.metrics_endpoint = signal_url(base, "metrics");
  } else {
    o.traces_endpoint = "http://localhost:4318/v1/traces";
    o.metrics_endpoint = "http://localhost:4318/v1/metrics";
  }
  if (const std::string t = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); !t.empty()) o.traces_endpoint = t;
  if (const std::string m = env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"); !m.empty()) o.metrics_endpoint = m;
  if (const std::string p = env("OTEL_EXPORTER_OTLP_PROTOCOL"); !p.empty() && !set_protocol(p, o, error))
    return false;
  if (const std::string c = env("OTEL_EXPORTER_OTLP_COMPRESSION"); !set_compression(c, o, error))
    return false;
  if (const std::string h = env("OTEL_EXPORTER_OTLP_HEADERS"); !parse_key_values(h, o.headers)) {
    error = "OTEL_EXPORTER_OTLP_HEADERS is not k=v,k2=v2";
    return false;
  }
  if (const std::string t = env("OTEL_EXPORTER_OTLP_TIMEOUT"); !t.empty()) {
    double ms = 0;
    if (!positive_number(t, ms)) {
      error = "OTEL_EXPORTER_OTLP_TIMEOUT is not a positive number of milliseconds";
      return false;
    }
    o.timeout_ms = static_cast<int>(ms);
  }
  if (const std::string r = env("OTEL_RESOURCE_ATTRIBUTES"); !parse_key_values(r, o.resource_attrs)) {
    error = "OTEL_RESOURCE_ATTRIBUTES is not k=v,k2=v2";
    return false;
  }
  o.service_name = env("OTEL_SERVICE_NAME");

  // Then the command line ("--name value" or "--name=value").
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string value;
    bool has_value = false;
    if (const std::size_t eq = a.find('='); a.starts_with("--") && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= argc) {
        error = a + " needs a value";
        return false;
      }
      value = argv[++i];
      return true;
    };
    double number = 0;
    if (a == "--help" || a == "-h") {
      help = true;
      return false;
    } else if (a == "--once") {
      o.once = true;
    } else if (a == "--per-thread") {
      o.per_thread = true;
    } else if (a == "--per-digest") {
      o.per_digest = true;
    } else if (!take()) {
      return false;
    } else if (a == "--region") {
      o.region = value;
    } else if (a == "--interval") {
      if (!positive_number(value, o.interval_s)) return error = "--interval needs seconds > 0", false;
    } else if (a == "--endpoint") {
      o.traces_endpoint = signal_url(value, "traces");
      o.metrics_endpoint = signal_url(value, "metrics");
    } else if (a == "--traces-endpoint") {
      o.traces_endpoint = value;
    } else if (a == "--metrics-endpoint") {
      o.metrics_endpoint = value;
    } else if (a == "--protocol") {
      if (!set_protocol(value, o, error)) return false;
    } else if (a == "--compression") {
      if (!set_compression(value, o, error)) return false;
    } else if (a == "--header") {
      if (!parse_key_values(value, o.headers)) return error = "--header needs K=V", false;
    } else if (a == "--timeout") {
      if (!positive_number(value, number)) return error = "--timeout needs milliseconds > 0", false;
      o.timeout_ms = static_cast<int>(number);
    } else if (a == "--service-name") {
      o.service_name = value;
    } else if (a == "--resource-attributes") {
      if (!parse_key_values(value, o.resource_attrs))
        return error = "--resource-attributes needs K=V,...", false;
    } else if (a == "--min-wait") {
      if (!parse_duration_ps(value, o.min_wait_ps))
        return error = "--min-wait needs a duration (1ms, 200us)", false;
    } else if (a == "--state") {
      o.state_path = value;
    } else if (a == "--signals") {
      o.traces = value.find("traces") != std::string::npos;
      o.metrics = value.find("metrics") != std::string::npos;
      if (!o.traces && !o.metrics) return error = "--signals needs traces, metrics or both", false;
    } else if (a == "--max-batch") {
      if (!positive_number(value, number)) return error = "--max-batch needs a number > 0", false;
      o.max_batch = static_cast<std::size_t>(number);
    } else if (a == "--max-queue") {
      if (!positive_number(value, number)) return error = "--max-queue needs a number > 0", false;
      o.max_queue = static_cast<std::size_t>(number);
    } else if (a == "--max-series") {
      if (!positive_number(value, number)) return error = "--max-series needs a number > 0", false;
      o.max_series = static_cast<std::size_t>(number);
    } else if (a == "--output") {
      o.output = value;
    } else if (a == "--max-attempts") {
      if (!positive_number(value, number)) return error = "--max-attempts needs a number > 0", false;
      o.max_attempts = static_cast<int>(number);
    } else if (a == "--initial-backoff") {
      if (!positive_number(value, number)) return error = "--initial-backoff needs milliseconds > 0", false;
      o.initial_backoff_ms = static_cast<int>(number);
    } else {
      error = "unknown option " + a;
      return false;
    }
  }
  if (o.region.empty()) {
    error = "--region PATH is required";
    return false;
  }
  return true;
}

}  // namespace pfs::otlp

// pfs_commit_delay: how long a committed setup change takes to reach a running
// program, measured on one clock (CLOCK_REALTIME, same host). Each round sends,
// over libpq, BEGIN; UPDATE setup_instruments SET enabled = 'NO'/'YES' for one
// instrument; notes the time just before COMMIT is sent and when it returns; and
// reads the moment the program saw the change from the probe file of
// tools/pfs_live.cpp (--probe-file: "enabled <ns>" / "disabled <ns>" lines, one
// per change its probe thread sees). Prints the delays and exits 1 unless every
// change was seen and the median delay from COMMIT sent is under --limit-us.
//
//   pfs_commit_delay --probe-file=PATH --instrument=NAME [--schema=ps]
//                    [--rounds=20] [--limit-us=1000]
// The connection: libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE, ...).
#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

std::int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool exec(PGconn* db, const std::string& sql) {
  PGresult* r = PQexec(db, sql.c_str());
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
  if (!ok) std::fprintf(stderr, "pfs_commit_delay: %s: %s", sql.c_str(), PQerrorMessage(db));
  PQclear(r);
  return ok;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string quoted(PGconn* db, const std::string& s, bool identifier) {
  char* q =
      identifier ? PQescapeIdentifier(db, s.c_str(), s.size()) : PQescapeLiteral(db, s.c_str(), s.size());
  std::string out = q != nullptr ? q : "";
  PQfreemem(q);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string probe_file, instrument, schema = "ps";
  int rounds = 20;
  double limit_us = 1000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* prefix) { return a.substr(std::string(prefix).size()); };
    if (a.starts_with("--probe-file=")) {
      probe_file = value("--probe-file=");
    } else if (a.starts_with("--instrument=")) {
      instrument = value("--instrument=");
    } else if (a.starts_with("--schema=")) {
      schema = value("--schema=");
    } else if (a.starts_with("--rounds=")) {
      rounds = std::atoi(value("--rounds=").c_str());
    } else if (a.starts_with("--limit-us=")) {
      limit_us = std::atof(value("--limit-us=").c_str());
    } else {
      probe_file.clear();
      break;
    }
  }
  if (probe_file.empty() || instrument.empty() || rounds < 1) {
    std::fprintf(stderr,
                 "usage: pfs_commit_delay --probe-file=PATH --instrument=NAME [--schema=ps] [--rounds=20] "
                 "[--limit-us=1000]\n");
    return 2;
  }
  PGconn* db = PQconnectdb("fallback_application_name=pfs_commit_delay");
  if (PQstatus(db) != CONNECTION_OK) {
    std::fprintf(stderr, "pfs_commit_delay: %s", PQerrorMessage(db));
    return 1;
  }
  const std::string update = "UPDATE " + quoted(db, schema, true) + ".setup_instruments SET enabled = ";
  const std::string where = " WHERE name = " + quoted(db, instrument, false);
  if (!exec(db, update + "'YES'" + where)) return 1;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  std::vector<double> from_sent, from_done;
  int unseen = 0;
  for (int round = 1; round <= rounds; ++round) {
    const bool enable = round % 2 == 0;
    const std::size_t seen_before = lines_of(probe_file).size();
    if (!exec(db, "BEGIN") || !exec(db, update + (enable ? "'YES'" : "'NO'") + where)) return 1;
    const std::int64_t sent = realtime_ns();
    if (!exec(db, "COMMIT")) return 1;
    const std::int64_t done = realtime_ns();
    // The probe logs the moment it saw the change; waiting for its line here
    // does not enter the measurement.
    std::vector<std::string> lines;
    for (int wait = 0; wait < 2000; ++wait) {
      lines = lines_of(probe_file);
      if (lines.size() > seen_before) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const char* expected = enable ? "enabled " : "disabled ";
    if (lines.size() != seen_before + 1 || !lines.back().starts_with(expected)) {
      std::printf("round %d: the program did not see the change to %s\n", round, expected);
      ++unseen;
    } else {
      const std::int64_t seen =
          std::strtoll(lines.back().c_str() + std::string(expected).size(), nullptr, 10);
      from_sent.push_back(static_cast<double>(seen - sent) / 1000.0);
      from_done.push_back(static_cast<double>(seen - done) / 1000.0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  PQfinish(db);
  if (from_sent.empty()) return 1;
  const long before_done = std::count_if(from_done.begin(), from_done.end(), [](double d) { return d <= 0; });
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[(v.size() - 1) / 2];
  };
  const double median_sent = median(from_sent);
  std::printf(
      "delay from COMMIT sent to the program seeing the change (us): median %.1f, max %.1f; seen before "
      "COMMIT returned: %ld of %zu (median %.1f us from COMMIT returned); not seen: %d of %d\n",
      median_sent, *std::max_element(from_sent.begin(), from_sent.end()), before_done, from_done.size(),
      median(from_done), unseen, rounds);
  return unseen == 0 && median_sent < limit_us ? 0 : 1;
}

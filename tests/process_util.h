// Helpers of the tests that run programs in child processes and read the regions
// they leave (test_preload, test_fork): a temporary directory, a runner that
// captures stdout (and key=value lines), and a region read back as tables.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/reader/reader.h"

extern char** environ;

namespace pfs_test {

using pfs::reader::region_reader;
using pfs::reader::row;

inline std::string temp_dir() {
  const char* t = std::getenv("TMPDIR");
  std::string dir = std::string(t != nullptr ? t : "/tmp") + "/pfs_test_" + std::to_string(getpid());
  mkdir(dir.c_str(), 0700);
  return dir;
}

// Removes this process's temporary directory when the tests end.
struct temp_dir_cleanup : ::testing::Environment {
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir(), ec);
  }
};
inline const auto* const g_cleanup = ::testing::AddGlobalTestEnvironment(new temp_dir_cleanup);

struct run_result {
  int status = -1;                            // exit status, or 128 + signal
  std::string out;                            // stdout
  std::map<std::string, std::string> values;  // key=value lines of stdout
  double seconds = 0;
};

// Runs argv with the current environment plus env (NAME=value entries); stdout
// is captured, stderr passes through (or goes to err_path). Killed after timeout_s.
inline run_result run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      int timeout_s = 120, const std::string& cwd = {}, const std::string& err_path = {}) {
  run_result r;
  const std::string out_path = temp_dir() + "/stdout_" + std::to_string(std::rand());
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const auto& x : env) replaced |= x.substr(0, x.find('=')) == name;
    if (!replaced) envs.push_back(kv);
  }
  for (const auto& x : env) envs.push_back(x);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : envs) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::freopen(out_path.c_str(), "w", stdout);
    if (f == nullptr) _exit(125);
    if (!err_path.empty() && std::freopen(err_path.c_str(), "w", stderr) == nullptr) _exit(125);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(124);
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  int status = 0;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(timeout_s)) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << argv[0] << " did not finish in " << timeout_s << " s (killed)";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  r.out = ss.str();
  unlink(out_path.c_str());
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const auto eq = line.find('=');
    if (eq != std::string::npos && eq > 0 && line.find(' ') > eq)
      r.values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return r;
}

inline long value(const run_result& r, const std::string& key) {
  auto it = r.values.find(key);
  return it == r.values.end() ? -1 : std::atol(it->second.c_str());
}

// A region, read back as tables.
class tables {
 public:
  explicit tables(const std::string& path) {
    pfs::region_error err;
    reader_ = region_reader::open(path, false, err);
    EXPECT_TRUE(reader_ != nullptr) << path << ": " << err.message;
  }
  bool ok() const { return reader_ != nullptr; }

  // Rows of a table as column name -> cell.
  std::vector<std::map<std::string, pfs::reader::cell>> rows(const char* table) {
    std::vector<std::map<std::string, pfs::reader::cell>> out;
    if (!reader_) return out;
    const auto* t = pfs::reader::find_table(table);
    EXPECT_NE(t, nullptr) << table;
    if (t == nullptr) return out;
    std::vector<row> raw;
    auto err = reader_->scan(*t, raw);
    EXPECT_FALSE(err) << err.message;
    for (const auto& r : raw) {
      std::map<std::string, pfs::reader::cell> m;
      for (std::size_t c = 0; c < r.size(); ++c) m[t->columns[c].name] = r[c];
      out.push_back(std::move(m));
    }
    return out;
  }
  // The row of a table whose text column col equals name (nullptr-like empty map if none).
  std::map<std::string, pfs::reader::cell> row_where(const char* table, const char* col,
                                                     const std::string& name) {
    for (auto& r : rows(table))
      if (!r[col].null && r[col].s == name) return r;
    return {};
  }
  std::int64_t status(const std::string& name) {
    auto r = row_where("status", "variable_name", name);
    return r.empty() ? -1 : r["variable_value"].i;
  }
  std::int64_t count_star(const std::string& event_name) {
    auto r = row_where("events_waits_summary_global_by_event_name", "event_name", event_name);
    return r.empty() ? -1 : r["count_star"].i;
  }
  // Every lost counter of the status table that is not 0.
  std::vector<std::string> lost() {
    std::vector<std::string> out;
    for (auto& r : rows("status")) {
      const std::string& n = r["variable_name"].s;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, "_lost") == 0 && r["variable_value"].i != 0)
        out.push_back(n + "=" + std::to_string(r["variable_value"].i));
    }
    return out;
  }

 private:
  std::unique_ptr<region_reader> reader_;
};

}  // namespace pfs_test

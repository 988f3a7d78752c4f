// Debian's nginx under the interposer (issue 40, item 5): a pre-forking server, a
// master and two workers, each recording into a region of its own
// (PFS_REGION=<dir>/nginx.%p.pfs). curl asks it for a static file of 100,000
// bytes (sent with sendfile), the same file from a location with sendfile off
// (read with pread into nginx's buffers, sent with writev) and a short body from
// `return 200` (sent with writev with its headers), each request on a connection
// of its own. Then, from the regions: the socket bytes the workers wrote add up to
// exactly the bytes curl received (headers and bodies, curl's own counts), the
// bytes they read to the bytes curl sent, and the file's bytes read, by sendfile
// and by pread, to the requests for it times its size; the master, which only
// listens, moved none.
//
// Normal build only (nginx is not built with the sanitizer). A missing nginx is a
// skip, or a failure with PFS_PRELOAD_REQUIRE_NGINX=1 (scripts/preload_check.sh:
// scripts/setup.sh installs it).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/preload_util.h"
#include "tests/process_util.h"

namespace {

using namespace pfs_test;

constexpr const char* kNginx = "/usr/sbin/nginx";
constexpr const char* kCurl = "/usr/bin/curl";
constexpr int kWorkers = 2;
constexpr int kFileSize = 100000;
constexpr int kRequestsPerPath = 10;
const std::string kSmallBody = "a short body, sent with its headers by writev\n";

std::string preload_path() { return std::string(PFS_BUILD_DIR) + "/agent/libpfs_preload.so"; }

// A loopback port nobody listens on now (the kernel's choice for port 0).
int free_port() {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof(a);
  int port = 0;
  if (bind(s, reinterpret_cast<sockaddr*>(&a), n) == 0 &&
      getsockname(s, reinterpret_cast<sockaddr*>(&a), &n) == 0)
    port = ntohs(a.sin_port);
  close(s);
  return port;
}

// nginx's own configuration: everything under the private prefix (pid, logs,
// temporary files), sendfile on, no keep-alive.
std::string configuration(int port) {
  std::ostringstream c;
  c << "worker_processes " << kWorkers << ";\n"
    << "pid nginx.pid;\n"
    << "error_log logs/error.log;\n"
    << "events { worker_connections 64; }\n"
    << "http {\n"
    << "  access_log off;\n"
    << "  server_tokens off;\n"
    << "  client_body_temp_path temp/body;\n"
    << "  proxy_temp_path temp/proxy;\n"
    << "  fastcgi_temp_path temp/fastcgi;\n"
    << "  uwsgi_temp_path temp/uwsgi;\n"
    << "  scgi_temp_path temp/scgi;\n"
    << "  sendfile on;\n"
    << "  keepalive_timeout 0;\n"
    << "  server {\n"
    << "    listen 127.0.0.1:" << port << ";\n"
    << "    root www;\n"
    << "    location /copied/ { sendfile off; alias www/; }\n"
    << "    location = /small { default_type text/plain; return 200 \""
    << kSmallBody.substr(0, kSmallBody.size() - 1) << "\\n\"; }\n"
    << "  }\n"
    << "}\n";
  return c.str();
}

// nginx started in a process group of its own; the group is killed when this
// goes, whatever happened (the master is asked to quit first by stop()).
class nginx_server {
 public:
  nginx_server(const std::string& prefix, const std::vector<std::string>& env) {
    std::vector<std::string> argv = {kNginx,           "-p", prefix + "/", "-c", "nginx.conf", "-e",
                                     "logs/error.log", "-g", "daemon off;"};
    std::vector<char*> cargv, cenv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    std::vector<std::string> envs = env;  // these replace the same names of this process's
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string kv = *e;
      bool replaced = false;
      for (const auto& x : env) replaced |= x.substr(0, x.find('=')) == kv.substr(0, kv.find('='));
      if (!replaced) envs.push_back(kv);
    }
    for (auto& e : envs) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    const std::string out = prefix + "/logs/stderr";
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      if (std::freopen(out.c_str(), "w", stdout) == nullptr ||
          std::freopen(out.c_str(), "a", stderr) == nullptr)
        _exit(125);
      execve(kNginx, cargv.data(), cenv.data());
      _exit(127);
    }
    if (pid_ > 0) setpgid(pid_, pid_);  // either side may run first
  }
  ~nginx_server() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGKILL);
    if (running_) waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  bool running() {
    if (running_ && waitpid(pid_, &status_, WNOHANG) == pid_) running_ = false;
    return running_;
  }
  // A graceful stop (SIGQUIT: the workers finish their connections and exit, then
  // the master); true if the master exited in time, with status 0.
  bool stop(std::chrono::seconds limit) {
    if (!running()) return false;
    kill(pid_, SIGQUIT);
    const auto end = std::chrono::steady_clock::now() + limit;
    while (running() && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return !running() && WIFEXITED(status_) && WEXITSTATUS(status_) == 0;
  }

 private:
  pid_t pid_ = -1;
  bool running_ = true;
  int status_ = 0;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> regions_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().extension() == ".pfs") out.push_back(f.path().string());
  return out;
}

// What one region says about the server's traffic.
struct traffic {
  long pid = 0;
  std::int64_t socket_read = 0, socket_written = 0;  // tcp: the client connections and the listener
  std::int64_t file_read = 0;                        // the static file
  std::int64_t sendfile_read = 0;                    // of it, in waits from nginx's sendfile path
  std::int64_t pread_read = 0;                       // of it, in waits from nginx's buffered path
  std::map<std::string, std::int64_t> sent_by;       // tcp bytes written, by the nginx function
  std::vector<std::string> lost;
};

traffic traffic_of(const std::string& region, const std::string& file_name) {
  traffic t;
  tables tb(region);
  EXPECT_TRUE(tb.ok()) << region;
  t.pid = static_cast<long>(tb.status("pid"));
  auto tcp = tb.row_where("socket_summary_by_event_name", "event_name", "wait/io/socket/preload/tcp");
  if (!tcp.empty()) {
    t.socket_read = tcp["sum_number_of_bytes_read"].i;
    t.socket_written = tcp["sum_number_of_bytes_write"].i;
  }
  auto f = tb.row_where("file_summary_by_instance", "file_name", file_name);
  if (!f.empty()) t.file_read = f["sum_number_of_bytes_read"].i;
  // The history (10,000 waits, enough for these requests) says which calls moved
  // the bytes: SOURCE is nginx's function (nginx exports its symbols).
  for (auto& e : tb.rows("events_waits_history_long")) {
    if (e["number_of_bytes"].null || e["number_of_bytes"].i <= 0) continue;
    const std::string function = e["source"].s.substr(0, e["source"].s.find('+'));
    if (e["event_name"].s == "wait/io/socket/preload/tcp" && e["operation"].s == "send")
      t.sent_by[function] += e["number_of_bytes"].i;
    if (!e["object_name"].null && e["object_name"].s == file_name && e["operation"].s == "read" &&
        function == "nginx:ngx_linux_sendfile_chain")
      t.sendfile_read += e["number_of_bytes"].i;
    if (!e["object_name"].null && e["object_name"].s == file_name && e["operation"].s == "read" &&
        function == "nginx:ngx_read_file")
      t.pread_read += e["number_of_bytes"].i;
  }
  t.lost = tb.lost();
  return t;
}

TEST(PreloadNginx, WorkersSocketBytesAddUpToWhatCurlCounted) {
  if (kSanitized) GTEST_SKIP() << "Debian's nginx is not built with the sanitizer; normal build only";
  if (access(kNginx, X_OK) != 0 || access(kCurl, X_OK) != 0) {
    if (std::getenv("PFS_PRELOAD_REQUIRE_NGINX") != nullptr)
      FAIL() << kNginx << " or " << kCurl << " is missing";
    GTEST_SKIP() << "Debian's nginx or curl is not installed (bash scripts/setup.sh installs them)";
  }
  struct stat st {};
  if (stat(preload_path().c_str(), &st) != 0) GTEST_SKIP() << "no " << preload_path() << " (not built)";

  // As root, nginx's workers run as nobody: the files they serve must be readable.
  const std::string top = temp_dir();
  chmod(top.c_str(), 0755);
  const std::string prefix = std::filesystem::canonical(top).string() + "/nginx";
  const std::string regions = prefix + "/regions";
  for (const char* d : {"", "/www", "/logs", "/temp", "/regions"})
    ASSERT_EQ(mkdir((prefix + d).c_str(), 0755), 0) << prefix + d;
  const std::string payload = prefix + "/www/payload.bin";
  {
    std::ofstream out(payload, std::ios::binary);
    for (int i = 0; i < kFileSize; ++i) out.put(static_cast<char>('a' + i % 26));
  }

  const int port = free_port();
  ASSERT_GT(port, 0);
  std::ofstream(prefix + "/nginx.conf") << configuration(port);
  nginx_server server(prefix, {"LD_PRELOAD=" + preload_path(), "PFS_REGION=" + regions + "/nginx.%p.pfs",
                               "PFS_INSTRUMENT=%=ON"});
  ASSERT_GT(server.pid(), 0);
  // Ready when the master and both workers have their regions (a worker's is made
  // as it is forked, after the master opened the listening socket).
  const auto ready_by = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (regions_in(regions).size() < 1 + kWorkers && server.running() &&
         std::chrono::steady_clock::now() < ready_by)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(regions_in(regions).size(), 1u + kWorkers)
      << "nginx did not start its workers: " << read_file(prefix + "/logs/stderr")
      << read_file(prefix + "/logs/error.log");

  // One curl, 3 x kRequestsPerPath transfers; nginx closes each connection
  // (keepalive_timeout 0, and the request says Connection: close), so each
  // transfer connects anew (num_connects 1). size_request is what curl sent.
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  std::vector<std::string> curl = {kCurl,
                                   "-s",
                                   "-S",
                                   "--max-time",
                                   "10",
                                   "-H",
                                   "Connection: close",
                                   "-w",
                                   "transfer=%{http_code} %{num_connects} %{size_header} %{size_download} "
                                   "%{size_request}\\n"};
  for (int i = 0; i < kRequestsPerPath; ++i)
    for (const char* path : {"/payload.bin", "/copied/payload.bin", "/small"}) {
      curl.insert(curl.end(), {"-o", "/dev/null", base + path});
    }
  run_result r = run(curl, {}, 120);
  ASSERT_EQ(r.status, 0) << r.out;
  std::int64_t received = 0, sent = 0;
  int transfers = 0, file_transfers = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("transfer=", 0) != 0) continue;
    int code = 0, connects = 0;
    std::int64_t header = 0, body = 0, request = 0;
    std::istringstream(line.substr(9)) >> code >> connects >> header >> body >> request;
    EXPECT_EQ(code, 200) << line;
    EXPECT_EQ(connects, 1) << "each request on a connection of its own: " << line;
    EXPECT_TRUE(body == kFileSize || body == static_cast<std::int64_t>(kSmallBody.size())) << line;
    file_transfers += body == kFileSize;
    received += header + body;
    sent += request;
    ++transfers;
  }
  ASSERT_EQ(transfers, 3 * kRequestsPerPath) << r.out;
  ASSERT_EQ(file_transfers, 2 * kRequestsPerPath) << r.out;

  // Counted as a call returns, which may be after curl has its last byte: the
  // regions are read once nginx has quit.
  ASSERT_TRUE(server.stop(std::chrono::seconds(30)))
      << read_file(prefix + "/logs/stderr") << read_file(prefix + "/logs/error.log");

  std::int64_t workers_read = 0, workers_written = 0, file_read = 0, sendfile_read = 0, pread_read = 0;
  std::map<std::string, std::int64_t> sent_by;
  int workers = 0;
  for (const std::string& region : regions_in(regions)) {
    const traffic t = traffic_of(region, payload);
    EXPECT_EQ(region, regions + "/nginx." + std::to_string(t.pid) + ".pfs");
    EXPECT_TRUE(t.lost.empty()) << region << ": " << ::testing::PrintToString(t.lost);
    if (t.pid == server.pid()) {  // the master: it listens, it serves nothing
      EXPECT_EQ(t.socket_read + t.socket_written + t.file_read, 0) << region;
      continue;
    }
    ++workers;
    std::printf("worker %ld: tcp bytes read %lld, written %lld; %s read %lld\n", t.pid,
                static_cast<long long>(t.socket_read), static_cast<long long>(t.socket_written),
                payload.c_str(), static_cast<long long>(t.file_read));
    workers_read += t.socket_read;
    workers_written += t.socket_written;
    file_read += t.file_read;
    sendfile_read += t.sendfile_read;
    pread_read += t.pread_read;
    for (const auto& [function, bytes] : t.sent_by) sent_by[function] += bytes;
  }
  std::printf("curl: %d requests, %lld bytes sent, %lld received; workers: %lld read, %lld written\n",
              transfers, static_cast<long long>(sent), static_cast<long long>(received),
              static_cast<long long>(workers_read), static_cast<long long>(workers_written));
  for (const auto& [function, bytes] : sent_by)
    std::printf("  sent by %s: %lld bytes\n", function.c_str(), static_cast<long long>(bytes));
  EXPECT_EQ(workers, kWorkers);
  EXPECT_EQ(workers_written, received);
  EXPECT_EQ(workers_read, sent);
  const std::int64_t one_way = std::int64_t{kRequestsPerPath} * kFileSize;  // the file's bytes, each location
  EXPECT_EQ(file_read, 2 * one_way);
  // With sendfile on the file went out through sendfile (its read and the socket's
  // send, one call each side); with sendfile off it was read with pread and sent
  // with writev, as the headers and the short body were.
  EXPECT_EQ(sendfile_read, one_way);
  EXPECT_EQ(pread_read, one_way);
  EXPECT_EQ(sent_by["nginx:ngx_linux_sendfile_chain"], one_way);
  EXPECT_EQ(sent_by["nginx:ngx_writev"], received - one_way);
}

}  // namespace

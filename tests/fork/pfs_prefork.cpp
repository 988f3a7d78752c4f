// A pre-forking program that links the agent (test_fork; the interposer's twin is
// tests/preload_programs/pl_prefork.c): the parent locks a pfs::mutex and writes a
// file, forks WORKERS workers while a second thread keeps locking, and each worker
// locks the same mutex LOCKS times and writes BYTES bytes to a file of its own.
// With %p in PFS_REGION every worker records into its own region. Prints
// parent_locks=N, worker_locks=N, worker_bytes=N and one worker=PID line each.
// With STAY_UNTIL=PATH the workers then keep locking the mutex (one lock a
// millisecond) until PATH exists, so that a reader sees them alive
// (tests/live/fdw_directory_test.sh).
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_io.h"

namespace {

constexpr int kParentLocks = 300;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

void write_file(pfs_key key, const std::string& path, int bytes) {
  const int fd = pfs::file::open(key, path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd < 0) std::exit(3);
  const std::string block(static_cast<std::size_t>(bytes), 'x');
  if (pfs::file::write(fd, block.data(), block.size()) != bytes) std::exit(4);
  pfs::file::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pfs_prefork DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  if (pfs_init_from_env() != 0) {
    std::fprintf(stderr, "pfs_prefork: agent not started: %s\n", pfs_last_error());
    return 1;
  }
  const int workers = env_int("WORKERS", 3), locks = env_int("LOCKS", 1000), bytes = env_int("BYTES", 4096);
  pfs::mutex queue_lock("prefork", "queue_lock");
  pfs::mutex busy_lock("prefork", "busy_lock");
  const pfs_key data_file = pfs_register_file("prefork", "data");
  for (int i = 0; i < kParentLocks; ++i) {
    queue_lock.lock();
    queue_lock.unlock();
  }
  write_file(data_file, dir + "/parent.data", bytes);
  // A second thread locks all along: fork must not catch the agent in mid-change.
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    while (!stop.load()) {
      busy_lock.lock();
      busy_lock.unlock();
    }
  });
  std::vector<pid_t> pids;
  for (int w = 0; w < workers; ++w) {
    const pid_t pid = fork();
    if (pid < 0) return 5;
    if (pid == 0) {
      for (int i = 0; i < locks; ++i) {
        queue_lock.lock();
        queue_lock.unlock();
      }
      write_file(data_file, dir + "/worker." + std::to_string(getpid()) + ".data", bytes);
      if (const char* stay = std::getenv("STAY_UNTIL"))
        while (access(stay, F_OK) != 0) {
          queue_lock.lock();
          queue_lock.unlock();
          usleep(1000);
        }
      std::fflush(nullptr);
      _exit(0);
    }
    pids.push_back(pid);
  }
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    ok = ok && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  stop = true;
  busy.join();
  std::printf("parent_locks=%d\nworker_locks=%d\nworker_bytes=%d\nworkers_ok=%d\n", kParentLocks, locks,
              bytes, ok ? 1 : 0);
  for (pid_t pid : pids) std::printf("worker=%d\n", static_cast<int>(pid));
  return ok ? 0 : 6;
}

// Static initializers: C++ globals whose constructors lock mutexes (std::mutex,
// PTHREAD_MUTEX_INITIALIZER) and open files before main, a library constructor
// that does the same while the program loads (pl_early), and destructors that
// lock after main returned, while a detached thread still runs.
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

extern "C" void pl_early_lock(void);
extern "C" int pl_early_locks;

namespace {

std::mutex g_std_mutex;  // constexpr constructor: PTHREAD_MUTEX_INITIALIZER, never pthread_mutex_init
pthread_mutex_t g_c_mutex = PTHREAD_MUTEX_INITIALIZER;

struct locks_in_constructor {
  int locks = 0;
  locks_in_constructor() {
    for (int i = 0; i < 100; ++i) {
      std::lock_guard<std::mutex> g(g_std_mutex);
      ++locks;
    }
    int fd = open("/proc/self/stat", O_RDONLY);
    char buf[64];
    if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0) std::abort();
    close(fd);
  }
  ~locks_in_constructor() {
    // After main: the interposer may already have shut down; nothing may break.
    for (int i = 0; i < 100; ++i) {
      pthread_mutex_lock(&g_c_mutex);
      pthread_mutex_unlock(&g_c_mutex);
    }
  }
} g_early;

std::atomic<bool> g_spin{true};

}  // namespace

int main() {
  for (int i = 0; i < 100; ++i) {
    std::lock_guard<std::mutex> g(g_std_mutex);
  }
  for (int i = 0; i < 50; ++i) pl_early_lock();
  // A thread still locking when the program exits.
  std::thread([] {
    while (g_spin.load()) {
      pthread_mutex_lock(&g_c_mutex);
      pthread_mutex_unlock(&g_c_mutex);
    }
  }).detach();
  usleep(20000);
  std::printf("std_mutex_locks=%d\nearly_locks=%d\n", g_early.locks + 100, pl_early_locks);
  std::fflush(stdout);
  return 0;
}

// The fork handlers' mutexes (fork_locks.h): held across fork() so that no child
// inherits one held by another thread, released in the parent, and found free in
// the child (the kernel wipes their page there, or the child releases them where it
// cannot). A second thread takes them all along while the main thread forks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>

#include "agent/provider/internal/fork_locks.h"
#include "agent/provider/pfs_io.h"
#include "agent/provider/pfs_socket.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

using namespace pfs;
using namespace pfs::test;
using pfs::detail::fork_locked;
using pfs::detail::fork_locks;
using pfs::detail::fork_locks_wiped_in_child;

// Registration and file declarations: the registry's and the file registry's
// mutexes, taken and released.
void take_the_registries(const std::string& dir, int i) {
  const std::string name = "m" + std::to_string(i % 8);
  EXPECT_NE(pfs_register_mutex("forklocks", name.c_str()), 0u);
  const pfs_key file = pfs::file::register_class("forklocks", "data");
  const int fd = pfs::file::open(file, (dir + "/data." + std::to_string(getpid())).c_str(),
                                 O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0);
  if (fd >= 0) pfs::file::close(fd);
  EXPECT_NE(pfs::socket::register_class("forklocks", "peer"), 0u);
}

TEST(ForkLocks, EveryChildFindsThemFreeWhileAnotherThreadTakesThem) {
  in_child([] {
    const std::string dir = temp_region_path("fork_locks") + ".d";
    ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
    options o = small_options("fork_locks");
    o.region_path = dir + "/app.%p.pfs";
    o.remove_at_exit = true;
    ASSERT_TRUE(init(o)) << last_error();

    std::atomic<bool> stop{false};
    std::thread busy([&] {
      for (int i = 0; !stop.load(); ++i) take_the_registries(dir, i);
    });
    for (int n = 0; n < 40; ++n) {
      in_child([&] {
        alarm(20);  // a mutex inherited held would hang the child: the alarm ends it
        fork_locks& l = fork_locked();
        for (std::mutex* m :
             {&l.registry, &l.accounts, &l.reattach, &l.files, &l.tables, &l.sockets, &l.data_locks}) {
          EXPECT_TRUE(m->try_lock());
          m->unlock();
        }
        take_the_registries(dir, n);  // and the agent's own paths take them
      });
    }
    stop = true;
    busy.join();
    take_the_registries(dir, 0);  // the parent released them after each fork
#if !defined(__SANITIZE_THREAD__)
    EXPECT_TRUE(fork_locks_wiped_in_child());  // Linux >= 4.14
#endif
    shutdown();
    std::string cmd = "rm -rf '" + dir + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  });
}

#if defined(__SANITIZE_ADDRESS__)
// compiler-rt's sanitizer/allocator_interface.h, which GCC does not install.
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*,
                                                                             std::size_t),
                                                         void (*free_hook)(const volatile void*));
thread_local bool tls_count_allocations = false;
std::atomic<int> g_allocations_counted{0};
void count_allocation(const volatile void*, std::size_t) {
  if (tls_count_allocations) g_allocations_counted.fetch_add(1);
}
void ignore_free(const volatile void*) {}
#endif

// A child forked while another thread held AddressSanitizer's allocator lock
// inherits it held (some versions of its runtime, GCC 12's among them, do not
// take it across fork): a child that allocates in exit() waits forever. What the agent
// does at a thread's exit (its registered threads' release) allocates nothing.
TEST(ForkLocks, AThreadsExitAllocatesNothing) {
#if !defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "counts allocations with AddressSanitizer's malloc hooks";
#else
  in_child([] {
    ASSERT_TRUE(init(small_options("thread_exit_allocations"))) << last_error();
    ASSERT_EQ(__sanitizer_install_malloc_and_free_hooks(count_allocation, ignore_free), 1);
    std::thread([] {
      register_thread("test", "exiting");
      tls_count_allocations = true;  // from here to the thread's end: its release
    }).join();
    EXPECT_EQ(g_allocations_counted.load(), 0);
    for (const auto& row : pfs::test::scan("threads"))
      EXPECT_NE(pfs::test::S(row, "name"), "thread/test/exiting");  // it was released
    shutdown();
  });
#endif
}

}  // namespace

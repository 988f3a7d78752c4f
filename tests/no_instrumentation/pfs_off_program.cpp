// A program written against the agent's API, built with PFS_NO_INSTRUMENTATION
// and no agent (CMake target pfs_api_off): every instrumented type is the plain
// std type and every call compiles. tests/end_to_end/test_no_instrumentation.cpp runs it
// with PFS_REGION set and checks that it works and writes no region.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_data_lock.h"
#include "agent/provider/pfs_io.h"
#include "agent/provider/pfs_meter.h"
#include "agent/provider/pfs_tls.h"
#include "agent/provider/pfs_work.h"

#ifndef PFS_NO_INSTRUMENTATION
#error "built to test PFS_NO_INSTRUMENTATION"
#endif

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  if (pfs::init(pfs::options::from_environment())) return 1;  // no agent: init says no
  pfs::register_thread("app", "main");
  pfs::mutex m{"app", "m"};
  pfs::shared_mutex rw{"app", "rw"};
  pfs::condition_variable cv{"app", "cv"};
  int ready = 0, locks = 0;
  pfs::thread t([&] {
    pfs::lock_guard g(m);
    ready = 1;
    cv.notify_all();
  });
  {
    pfs::unique_lock l(m);
    cv.wait(l, [&] { return ready == 1; });
  }
  t.join();
  for (int i = 0; i < 1000; ++i) {
    {
      pfs::lock_guard g(m);
      ++locks;
    }
    rw.lock_shared();
    rw.unlock_shared();
  }
  const pfs_key data = pfs::file::register_class("app", "data");
  const std::string path = dir + "/pfs_off_program.data";
  const int fd = pfs::file::open(data, path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
  if (fd < 0 || pfs::file::write(fd, "abc", 3) != 3 || pfs::file::close(fd) != 0) return 2;
  ::unlink(path.c_str());
  if (pfs::unload_plugin("app") != 0 || pfs_unload_plugin("app") != 0) return 4;
  pfs::tls_channel tls{"mysql_main"};  // compiled out: nothing registered, nothing shown
  if (tls.registered() || tls.set("Ssl_accepts", "1")) return 5;
  pfs_data_lock_desc d{};
  d.engine = "INNODB";
  d.engine_lock_id = "1";
  d.lock_type = "TABLE";
  d.lock_mode = "X";
  d.lock_status = "GRANTED";
  pfs::data_lock held{d};
  pfs::data_lock wanted{d};
  pfs::data_lock_wait w{wanted, held};
  if (held.recorded() || w.recorded()) return 6;  // compiled out: nothing is recorded
  static constinit pfs::meter meter{"app", "the program's numbers"};
  static constinit pfs::counter<std::int64_t> orders{meter, "orders"};
  static constinit pfs::gauge<double> load{meter, "load"};
  orders.add(1);  // compiled out: nothing is declared or counted
  load.set(0.5);
  pfs::observed_gauge<std::int64_t> queue{meter, "queue", "{job}", "", [] { return std::int64_t{1}; }};
  if (meter.id() != pfs::meter::kNone || orders.id() != pfs::counter<std::int64_t>::kNone || queue.id() != 0)
    return 7;
  std::printf("locks=%d\nthread_id=%llu\nactive=%d\n", locks,
              static_cast<unsigned long long>(pfs::thread_id()), pfs::active() ? 1 : 0);
  return locks == 1000 ? 0 : 3;
}

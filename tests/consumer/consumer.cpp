// An application built against the installed perfschema (tests/live/install_test.sh):
// locks a pfs::mutex LOCKS times and writes a file, then says how many.
#include <fcntl.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_io.h"

int main(int argc, char** argv) {
  if (pfs_init_from_env() != 0) {
    std::fprintf(stderr, "pfs_consumer: %s\n", pfs_last_error());
    return 1;
  }
  const int locks = argc > 1 ? std::atoi(argv[1]) : 1000;
  pfs::mutex orders_lock("consumer", "orders_lock");
  for (int i = 0; i < locks; ++i) {
    std::lock_guard<pfs::mutex> guard(orders_lock);
  }
  const pfs_key log = pfs_register_file("consumer", "log");
  const std::string path = std::string(std::getenv("PFS_REGION")) + ".log";
  const int fd = pfs::file::open(log, path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd < 0 || pfs::file::write(fd, "hello\n", 6) != 6) return 2;
  pfs::file::close(fd);
  std::printf("locks=%d\n", locks);
  return 0;
}

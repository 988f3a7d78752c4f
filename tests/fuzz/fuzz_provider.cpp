// libFuzzer target: a running provider whose region file is changed under it. The
// agent runs in this process with classes and objects of every kind
// (tests/agent/entry_points.h); each input is a list of changes to its region file —
// bytes written at an offset (the mapping shares the file's pages, so the agent
// sees them at once) or the file truncated to a length (the agent's next access
// faults; the region is lost until the file is restored) — after which every entry
// point of the service table and the C++ API is called. Any crash, sanitizer
// report or input slower than a second is a failure. Before each input the file is
// restored to the sound region, and the agent maps it back once it notices.
//
// Build and run: bash scripts/fuzz.sh [SECONDS]
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/agent/entry_points.h"

namespace {

using namespace pfs::entry_points;

std::string g_path;
std::vector<char> g_sound;  // the region file as it was after the fixture was made
std::map<const void*, scenario> g_all;
int g_fd = -1;

void write_all(int fd, const char* data, std::size_t size, off_t at) {
  while (size > 0) {
    const ssize_t n = pwrite(fd, data, size, at);
    if (n <= 0) return;
    data += n;
    size -= static_cast<std::size_t>(n);
    at += n;
  }
}

void restore() {
  if (ftruncate(g_fd, static_cast<off_t>(g_sound.size())) != 0) return;
  write_all(g_fd, g_sound.data(), g_sound.size(), 0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  pfs::options o;
  g_path = "/tmp/pfs_fuzz_provider_" + std::to_string(getpid()) + ".region";
  o.region_path = g_path;
  o.sizes.max_classes = 64;
  o.sizes.max_threads = 16;
  o.sizes.history_long_size = 256;
  o.sizes.max_mutexes = 64;
  o.sizes.max_rwlocks = 64;
  o.sizes.max_conds = 64;
  o.sizes.max_files = 64;
  o.sizes.max_tables = 16;
  o.sizes.max_sockets = 64;
  o.sizes.digest_size = 64;
  o.instrument = "%=ON";
  o.remove_at_exit = true;
  if (!pfs::init(o) || !make_fixture(g_path)) {
    std::fprintf(stderr, "fuzz_provider: %s\n", pfs::last_error().c_str());
    std::abort();
  }
  g_all = scenarios();
  every_entry_point(g_all);  // the region sound: every path taken once
  g_fd = ::open(g_path.c_str(), O_RDWR | O_CLOEXEC);
  struct stat st {};
  if (g_fd < 0 || fstat(g_fd, &st) != 0) std::abort();
  g_sound.resize(static_cast<std::size_t>(st.st_size));
  if (pread(g_fd, g_sound.data(), g_sound.size(), 0) != static_cast<ssize_t>(g_sound.size())) std::abort();
  return 0;
}

// Input: records of [kind: 1 byte][offset: 4 bytes, modulo the file size][n: 1
// byte][n bytes]. kind % 8 == 7 truncates the file to the offset (n and the bytes
// are absent); any other kind writes the n bytes at the offset.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  restore();
  const std::uint64_t file_size = g_sound.size();
  std::size_t at = 0;
  while (at + 5 <= size) {
    const std::uint8_t kind = data[at];
    std::uint32_t offset = 0;
    std::memcpy(&offset, data + at + 1, 4);
    at += 5;
    const auto where = static_cast<off_t>(offset % file_size);
    if (kind % 8 == 7) {
      if (ftruncate(g_fd, where) != 0) break;
      continue;
    }
    if (at >= size) break;
    std::size_t n = data[at++];
    if (n > size - at) n = size - at;
    if (static_cast<std::uint64_t>(where) + n > file_size) n = static_cast<std::size_t>(file_size - where);
    write_all(g_fd, reinterpret_cast<const char*>(data + at), n, where);
    at += n;
  }
  every_entry_point(g_all);
  return 0;
}

// Function names of a stripped module from its separate debug file: Debian's
// -dbgsym packages install each program's and library's symbols as
// /usr/lib/debug/.build-id/<first byte>/<the other bytes>.debug, named by the
// module's build id (its NT_GNU_BUILD_ID note, which is loaded with the module).
// The debug file's .symtab holds every function, static ones too, at the same file
// addresses as the module.
//
// Only when a call site is resolved (once per caller address, preload_sites.cpp),
// and once per module: the file is mapped read-only and kept for the life of the
// process. System calls only (no malloc, no stdio, no lock the program may hold).
// PFS_DEBUG_DIR replaces /usr/lib/debug (gdb's debug-file-directory).
#include "agent/preload/preload_debuginfo.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "agent/preload/preload_symbols.h"

namespace pfs::preload {
namespace {

constexpr std::uint32_t kMaxDebugModules = 256;

struct debug_module {
  std::atomic<const void*> id{nullptr};  // link_map*
  std::atomic<std::uint32_t> state{0};   // 0 being read, 1 ready
  const unsigned char* image = nullptr;  // the debug file, mapped; nullptr: none
  std::size_t size = 0;
  lazy_function_index functions;  // its .symtab's functions by address
};
constinit debug_module g_debug[kMaxDebugModules];

// The build id of the module mapped at map_start (its ELF header is there): up to
// cap bytes into id; the length, 0 if none.
std::size_t build_id(const link_map* lm, const void* map_start, unsigned char* id, std::size_t cap) {
  const auto* eh = static_cast<const ElfW(Ehdr)*>(map_start);
  if (eh == nullptr || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_phentsize != sizeof(ElfW(Phdr)))
    return 0;
  const auto* ph = reinterpret_cast<const ElfW(Phdr)*>(static_cast<const char*>(map_start) + eh->e_phoff);
  for (unsigned i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(lm->l_addr + ph[i].p_vaddr);
    const char* end = p + ph[i].p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const char* name = p + sizeof(ElfW(Nhdr));
      const char* desc = name + ((n->n_namesz + 3) & ~3u);
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
          n->n_descsz > 0 && n->n_descsz <= cap && desc + n->n_descsz <= end) {
        std::memcpy(id, desc, n->n_descsz);
        return n->n_descsz;
      }
      p = desc + ((n->n_descsz + 3) & ~3u);
    }
  }
  return 0;
}

// Maps <root>/.build-id/xx/yyyy.debug; nullptr when there is none.
const unsigned char* map_debug_file(const unsigned char* id, std::size_t len, std::size_t* size) {
  const char* root = std::getenv("PFS_DEBUG_DIR");
  if (root == nullptr || *root == '\0') root = "/usr/lib/debug";
  char path[512];
  int n = std::snprintf(path, sizeof(path), "%s/.build-id/%02x/", root, id[0]);
  for (std::size_t i = 1; i < len && n > 0 && static_cast<std::size_t>(n) + 3 < sizeof(path); ++i)
    n += std::snprintf(path + n, sizeof(path) - static_cast<std::size_t>(n), "%02x", id[i]);
  if (n <= 0 || static_cast<std::size_t>(n) + 7 >= sizeof(path)) return nullptr;
  std::memcpy(path + n, ".debug", 7);
  const int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return nullptr;
  struct stat st {};
  void* image = MAP_FAILED;
  if (syscall(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode) &&
      st.st_size >= static_cast<off_t>(sizeof(ElfW(Ehdr))))
    image = reinterpret_cast<void*>(
        syscall(SYS_mmap, nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0));
  syscall(SYS_close, fd);
  if (image == MAP_FAILED) return nullptr;
  *size = static_cast<std::size_t>(st.st_size);
  return static_cast<const unsigned char*>(image);
}

debug_module* debug_module_of(const link_map* lm, const void* map_start) {
  for (debug_module& m : g_debug) {
    const void* cur = m.id.load(std::memory_order_acquire);
    if (cur == nullptr) {
      const void* expected = nullptr;
      if (m.id.compare_exchange_strong(expected, lm, std::memory_order_acq_rel)) {
        unsigned char id[64];
        const std::size_t len = build_id(lm, map_start, id, sizeof(id));
        if (len > 0) m.image = map_debug_file(id, len, &m.size);
        m.state.store(1, std::memory_order_release);
        return &m;
      }
      cur = expected;
    }
    if (cur == lm) {
      for (unsigned spins = 0; m.state.load(std::memory_order_acquire) == 0; ++spins)
        if (spins > 64) sched_yield();
      return &m;
    }
  }
  return nullptr;
}

// The function of the debug file's .symtab that contains file address addr.
bool symtab_function(const unsigned char* image, std::size_t size, lazy_function_index& functions,
                     ElfW(Addr) addr, const char** name, ElfW(Addr) * start) {
  const auto* eh = reinterpret_cast<const ElfW(Ehdr)*>(image);
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff == 0 ||
      eh->e_shoff + static_cast<std::uint64_t>(eh->e_shnum) * sizeof(ElfW(Shdr)) > size)
    return false;
  const auto* sh = reinterpret_cast<const ElfW(Shdr)*>(image + eh->e_shoff);
  for (unsigned i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
    const ElfW(Shdr)& strs = sh[sh[i].sh_link];
    if (sh[i].sh_offset + sh[i].sh_size > size || strs.sh_offset + strs.sh_size > size) return false;
    symbol_table t;
    t.symbols = reinterpret_cast<const ElfW(Sym)*>(image + sh[i].sh_offset);
    t.count = sh[i].sh_size / sizeof(ElfW(Sym));
    t.strings = reinterpret_cast<const char*>(image + strs.sh_offset);
    t.strings_size = strs.sh_size;
    const char* found = nullptr;
    if (!functions.find(
            image, [&t] { return t; }, addr, &found, start) ||
        std::memchr(found, '\0', strs.sh_size - static_cast<std::size_t>(found - t.strings)) == nullptr)
      return false;
    *name = found;
    return true;
  }
  return false;
}

}  // namespace

bool debug_file_symbol(const link_map* lm, const void* map_start, ElfW(Addr) addr, const char** name,
                       ElfW(Addr) * start) {
  if (lm == nullptr || map_start == nullptr) return false;
  debug_module* m = debug_module_of(lm, map_start);
  if (m == nullptr || m->image == nullptr) return false;
  return symtab_function(m->image, m->size, m->functions, addr, name, start);
}

}  // namespace pfs::preload

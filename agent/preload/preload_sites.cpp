// Call sites of the interposed functions: caller address -> module, symbol,
// SOURCE text and instrument classes, resolved once and cached in fixed tables.
//
// Resolution takes no lock that the program could hold or wait for: the module
// comes from _dl_find_object (glibc 2.35+, lock-free, unlike dladdr, which takes
// the loader lock and could deadlock against a thread inside dlopen that waits for
// a mutex held by this thread), the symbol from the module's dynamic symbol table
// in memory (sorted by address once per module: preload_symbols.h). No malloc:
// names are built in fixed buffers.
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstring>

#include "agent/preload/preload_debuginfo.h"
#include "agent/preload/preload_internal.h"
#include "agent/preload/preload_symbols.h"
#include "agent/provider/internal/preload_api.h"

namespace pfs::preload {
namespace {

using namespace pfs::detail;

constexpr std::uint32_t kReady = 2;
constexpr std::uint32_t kWriting = 1;
constexpr std::uint32_t kFailed = UINT32_MAX;  // a key whose registration failed
constexpr std::size_t kModuleNameLen = 40;

struct module_entry {
  std::atomic<const void*> id{nullptr};  // link_map*, or &g_unknown_module
  std::atomic<std::uint32_t> state{0};
  char name[kModuleNameLen] = {};  // sanitized: the category of its classes
  std::atomic<std::uint32_t> static_key[kSyncKinds] = {};
  std::atomic<std::uint32_t> file_key{0};
  lazy_function_index functions;  // its dynamic symbols by address
};
constexpr std::uint32_t kMaxModules = 256;
constinit module_entry g_modules[kMaxModules];
const char g_unknown_module = 0;

// Call sites: records taken in order from one array, found through an index of
// record numbers keyed by the caller's address. A forked process (a PostgreSQL
// backend) names the sites its parent never reached: each one writes the next
// record and one 4-byte slot, so its copy-on-write faults are a few pages of
// records and of the index, not one page of a large table per site.
constexpr std::uint32_t kSiteCount = 8192;
constexpr std::uint32_t kSiteIndexBits = 14;  // twice the records: short probes
constexpr std::uint32_t kSiteIndexCount = 1u << kSiteIndexBits;
constexpr std::uint32_t kSiteProbe = 16;
call_site* g_sites = nullptr;                           // kSiteCount records
std::atomic<std::uint32_t>* g_site_index = nullptr;     // record number + 1; 0 = free
constinit std::atomic<std::uint32_t> g_sites_taken{0};  // records handed out

constexpr instrument_kind kInstrumentKind[kSyncKinds] = {kKindMutex, kKindRwlock, kKindCond, kKindSem};

void wait_ready(const std::atomic<std::uint32_t>& state) {
  for (unsigned spins = 0; state.load(std::memory_order_acquire) != kReady; ++spins) {
    if (spins < 64)
      __builtin_ia32_pause();
    else
      sched_yield();
  }
}

// ---------------------------------------------------------------------------
// Symbols from the module's dynamic symbol table (as mapped in memory).

ElfW(Addr) dyn_ptr(const link_map* lm, ElfW(Addr) p) {
  // glibc relocates these entries of l_ld in place where the dynamic section is
  // writable (x86-64); elsewhere they are still file addresses.
  return (lm->l_addr != 0 && p < lm->l_addr) ? p + lm->l_addr : p;
}

std::uint32_t gnu_hash_symbol_count(const std::uint32_t* gh) {
  const std::uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
  const std::uint32_t* buckets = gh + 4 + bloom_size * (sizeof(ElfW(Addr)) / 4);
  const std::uint32_t* chain = buckets + nbuckets;
  std::uint32_t last = 0;
  for (std::uint32_t b = 0; b < nbuckets; ++b)
    if (buckets[b] > last) last = buckets[b];
  if (last < symoffset) return symoffset;
  while ((chain[last - symoffset] & 1u) == 0) ++last;
  return last + 1;
}

// The function of module m (loaded as lm) that contains addr: name and start address;
// false if none.
bool find_symbol(module_entry* m, const link_map* lm, ElfW(Addr) addr, const char** name,
                 ElfW(Addr) * start) {
  if (lm == nullptr || lm->l_ld == nullptr) return false;
  // The table is read from the dynamic section only to build the index (or scan).
  const auto table = [lm] {
    symbol_table t;
    t.ifunc = true;
    std::uint32_t count = 0;
    for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; ++d) {
      switch (d->d_tag) {
        case DT_SYMTAB:
          t.symbols = reinterpret_cast<const ElfW(Sym)*>(dyn_ptr(lm, d->d_un.d_ptr));
          break;
        case DT_STRTAB:
          t.strings = reinterpret_cast<const char*>(dyn_ptr(lm, d->d_un.d_ptr));
          break;
        case DT_STRSZ:
          t.strings_size = d->d_un.d_val;
          break;
        case DT_HASH:
          if (count == 0) count = reinterpret_cast<const std::uint32_t*>(dyn_ptr(lm, d->d_un.d_ptr))[1];
          break;
        case DT_GNU_HASH:
          count = gnu_hash_symbol_count(reinterpret_cast<const std::uint32_t*>(dyn_ptr(lm, d->d_un.d_ptr)));
          break;
        default:
          break;
      }
    }
    if (t.symbols != nullptr && t.strings != nullptr) t.count = count;
    return t;
  };
  const bool found = m != nullptr ? m->functions.find(lm->l_ld, table, addr - lm->l_addr, name, start)
                                  : scan_for_function(table(), addr - lm->l_addr, name, start);  // table full
  if (!found) return false;
  *start += lm->l_addr;
  return true;
}

// Start of the function that contains pc, from the module's .eh_frame_hdr
// binary search table (what the unwinder uses; present in stripped programs
// too). 0 if the table is missing or in an encoding this does not read.
ElfW(Addr) function_start(const void* eh_frame_hdr, ElfW(Addr) pc) {
  const auto* h = static_cast<const unsigned char*>(eh_frame_hdr);
  // version 1; eh_frame_ptr pcrel|sdata4; fde_count udata4; table datarel|sdata4
  if (h == nullptr || h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b) return 0;
  std::uint32_t count = 0;
  std::memcpy(&count, h + 8, 4);
  const auto* table = reinterpret_cast<const std::int32_t*>(h + 12);
  const auto base = reinterpret_cast<ElfW(Addr)>(h);
  if (count == 0 || pc < base + static_cast<ElfW(Addr)>(static_cast<std::intptr_t>(table[0]))) return 0;
  std::uint32_t lo = 0, hi = count;  // last entry whose start <= pc
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (base + static_cast<ElfW(Addr)>(static_cast<std::intptr_t>(table[2 * mid])) <= pc)
      lo = mid;
    else
      hi = mid;
  }
  const ElfW(Addr) start = base + static_cast<ElfW(Addr)>(static_cast<std::intptr_t>(table[2 * lo]));
  // The FDE: length, CIE pointer, pc_begin (pcrel sdata4), pc_range (4 bytes).
  const auto* fde = reinterpret_cast<const unsigned char*>(
      base + static_cast<ElfW(Addr)>(static_cast<std::intptr_t>(table[2 * lo + 1])));
  std::int32_t begin = 0;
  std::uint32_t range = 0;
  std::memcpy(&begin, fde + 8, 4);
  std::memcpy(&range, fde + 12, 4);
  if (reinterpret_cast<ElfW(Addr)>(fde + 8) + static_cast<ElfW(Addr)>(static_cast<std::intptr_t>(begin)) !=
      start)
    return 0;
  return pc < start + range ? start : 0;
}

// ---------------------------------------------------------------------------
// Modules

module_entry* module_of(const void* id, const char* path) {
  for (std::uint32_t i = 0; i < kMaxModules; ++i) {
    module_entry& m = g_modules[i];
    const void* cur = m.id.load(std::memory_order_acquire);
    if (cur == nullptr) {
      const void* expected = nullptr;
      if (m.id.compare_exchange_strong(expected, id, std::memory_order_acq_rel)) {
        sanitize_module(path, m.name, sizeof(m.name));
        m.state.store(kReady, std::memory_order_release);
        return &m;
      }
      cur = expected;
    }
    if (cur == id) {
      wait_ready(m.state);
      return &m;
    }
  }
  return nullptr;
}

const char* main_program_name() {
  // glibc (errno.h): argv[0] of the program.
  return ::program_invocation_name != nullptr ? ::program_invocation_name : "program";
}

struct resolution {
  module_entry* module = nullptr;
  const link_map* map = nullptr;
  const void* eh_frame_hdr = nullptr;
  const void* map_start = nullptr;  // the module's first mapping (its ELF header)
};

resolution resolve_module(const void* caller) {
  resolution r;
  dl_find_object fo{};
  const char* path = nullptr;
  const void* id = &g_unknown_module;
  if (_dl_find_object(const_cast<void*>(caller), &fo) == 0 && fo.dlfo_link_map != nullptr) {
    r.map = fo.dlfo_link_map;
    r.eh_frame_hdr = fo.dlfo_eh_frame;
    r.map_start = fo.dlfo_map_start;
    id = r.map;
    path = r.map->l_name;
    if (path == nullptr || *path == '\0') path = main_program_name();
  }
  if (path == nullptr) path = "unknown";
  r.module = module_of(id, path);
  return r;
}

std::uint32_t module_index(const module_entry* m) {
  return m == nullptr ? 0 : static_cast<std::uint32_t>(m - g_modules) + 1;
}

// Registers a class once per slot (races register the same name: same key).
pfs_key lazy_key(std::atomic<std::uint32_t>& slot, instrument_kind kind, const char* category,
                 const char* name) {
  std::uint32_t k = slot.load(std::memory_order_acquire);
  if (k == 0) {
    k = register_class(kind, category, name);  // counts classes lost when full
    slot.store(k == 0 ? kFailed : k, std::memory_order_release);
    if (k == 0) k = kFailed;
  }
  return k == kFailed ? 0 : k;
}

void fill_site(call_site& s, const void* caller) {
  const resolution r = resolve_module(caller);
  s.module = module_index(r.module);
  const char* module = r.module != nullptr ? r.module->name : "unknown";
  const auto addr = reinterpret_cast<ElfW(Addr)>(caller);
  const char* sym = nullptr;
  ElfW(Addr) start = 0;
  char offset[24];
  if (find_symbol(r.module, r.map, addr - 1, &sym, &start)) {
    sanitize_symbol(sym, s.symbol, sizeof(s.symbol));
    std::snprintf(offset, sizeof(offset), "+0x%lx", static_cast<unsigned long>(addr - start));
  } else if (const ElfW(Addr) base = r.map != nullptr ? r.map->l_addr : 0;
             debug_file_symbol(r.map, r.map_start, addr - 1 - base, &sym, &start)) {
    // Not exported, but named in the module's debug file (a -dbgsym package).
    sanitize_symbol(sym, s.symbol, sizeof(s.symbol));
    std::snprintf(offset, sizeof(offset), "+0x%lx", static_cast<unsigned long>(addr - base - start));
  } else {
    // Not an exported function (a stripped program's own code): the function's
    // start from the unwind table, as an address in the file (for addr2line).
    const ElfW(Addr) fn = function_start(r.eh_frame_hdr, addr - 1);
    if (fn != 0) {
      std::snprintf(s.symbol, sizeof(s.symbol), "0x%lx", static_cast<unsigned long>(fn - base));
      std::snprintf(offset, sizeof(offset), "+0x%lx", static_cast<unsigned long>(addr - fn));
    } else {
      std::snprintf(s.symbol, sizeof(s.symbol), "0x%lx", static_cast<unsigned long>(addr - base));
      offset[0] = '\0';
    }
    sym = nullptr;
  }
  // SOURCE "module:symbol+0xoff", cut in the symbol when too long so the offset stays.
  const std::size_t room = sizeof(s.source) - 1;
  const std::size_t fixed = std::strlen(module) + 1 + std::strlen(offset);
  const char* shown = sym != nullptr ? sym : s.symbol;
  const int keep = fixed < room ? static_cast<int>(room - fixed) : 0;
  // A module name longer than SOURCE is cut (the result checked, so GCC -O1 sees
  // the cut is meant).
  if (std::snprintf(s.source, sizeof(s.source), "%s:%.*s%s", module, keep, shown, offset) < 0)
    s.source[0] = '\0';
  for (char* p = s.source; *p != '\0'; ++p)
    if (*p == '/') *p = '_';  // the agent keeps what follows the last '/' (a file's base name)
}

}  // namespace

void sanitize_module(const char* path, char* out, std::size_t cap) {
  if (cap == 0) return;
  const char* base = path != nullptr ? std::strrchr(path, '/') : nullptr;
  base = base != nullptr ? base + 1 : (path != nullptr ? path : "");
  std::size_t len = std::strlen(base);
  if (const char* so = std::strstr(base, ".so");
      so != nullptr && so != base && (so[3] == '\0' || so[3] == '.'))
    len = static_cast<std::size_t>(so - base);
  std::size_t n = 0;
  for (std::size_t i = 0; i < len && n + 1 < cap; ++i) {
    const char c = base[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out[n++] = ok ? c : (c == '+' ? 'p' : '_');
  }
  if (n == 0) {
    std::snprintf(out, cap, "unknown");
    return;
  }
  out[n] = '\0';
}

void sanitize_symbol(const char* symbol, char* out, std::size_t cap) {
  if (cap == 0) return;
  std::size_t n = 0;
  for (const char* p = symbol != nullptr ? symbol : ""; *p != '\0' && n + 1 < cap; ++p) {
    const char c = *p;
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == ':' || c == '.' || c == '-';
    out[n++] = ok ? c : '_';
  }
  if (n == 0) {
    std::snprintf(out, cap, "unknown");
    return;
  }
  out[n] = '\0';
}

void program_category(char* out, std::size_t cap) {
  if (cap == 0) return;
  const char* program = ::program_invocation_short_name;
  std::size_t n = 0;
  for (const char* p = program != nullptr ? program : ""; *p != '\0' && n + 1 < cap; ++p)
    out[n++] = ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) ? *p : '_';
  if (n == 0) {
    std::snprintf(out, cap, "program");
    return;
  }
  out[n] = '\0';
}

bool init_sites() {
  if (g_sites != nullptr) return true;
  const std::size_t records = sizeof(call_site) * kSiteCount;
  const std::size_t index = sizeof(std::atomic<std::uint32_t>) * kSiteIndexCount;
  void* p = mmap(nullptr, records + index, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  // Zero-filled: every slot free. The index first: records start on a page.
  g_site_index = static_cast<std::atomic<std::uint32_t>*>(p);
  g_sites = reinterpret_cast<call_site*>(static_cast<char*>(p) + index);
  return true;
}

call_site* site_of(const void* caller) {
  if (g_sites == nullptr) return nullptr;
  const auto key = reinterpret_cast<std::uintptr_t>(caller);
  std::uint32_t i = static_cast<std::uint32_t>((static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ull) >>
                                               (64 - kSiteIndexBits));
  call_site* mine = nullptr;  // a record taken for this caller, not yet in the index
  for (std::uint32_t probe = 0; probe < kSiteProbe; ++probe, i = (i + 1) & (kSiteIndexCount - 1)) {
    std::uint32_t n = g_site_index[i].load(std::memory_order_acquire);
    if (n == 0) {
      if (mine == nullptr) {
        // Full: not counted further (a counter that kept going would wrap).
        if (g_sites_taken.load(std::memory_order_relaxed) >= kSiteCount) return nullptr;
        const std::uint32_t r = g_sites_taken.fetch_add(1, std::memory_order_relaxed);
        if (r >= kSiteCount) return nullptr;  // full (a record lost to a race stays unused)
        mine = &g_sites[r];
        mine->addr.store(key, std::memory_order_relaxed);
        mine->state.store(kWriting, std::memory_order_relaxed);
      }
      const auto number = static_cast<std::uint32_t>(mine - g_sites) + 1;
      if (g_site_index[i].compare_exchange_strong(n, number, std::memory_order_acq_rel)) {
        fill_site(*mine, caller);
        mine->state.store(kReady, std::memory_order_release);
        return mine;
      }
      // Another thread took the slot: n is its record.
    }
    call_site& s = g_sites[n - 1];
    if (s.addr.load(std::memory_order_relaxed) == key) {
      wait_ready(s.state);
      return &s;
    }
  }
  return nullptr;
}

pfs_key init_class(const void* caller, sync_kind kind) {
  call_site* s = site_of(caller);
  if (s == nullptr) return static_class(caller, kind);
  const module_entry* m = s->module != 0 ? &g_modules[s->module - 1] : nullptr;
  return lazy_key(s->init_key[kind], kInstrumentKind[kind], m != nullptr ? m->name : "unknown", s->symbol);
}

pfs_key static_class(const void* caller, sync_kind kind) {
  call_site* s = site_of(caller);
  module_entry* m =
      s != nullptr ? (s->module != 0 ? &g_modules[s->module - 1] : nullptr) : resolve_module(caller).module;
  if (m == nullptr) return 0;
  return lazy_key(m->static_key[kind], kInstrumentKind[kind], m->name, "static");
}

pfs_key file_class(const void* caller) {
  call_site* s = site_of(caller);
  module_entry* m =
      s != nullptr ? (s->module != 0 ? &g_modules[s->module - 1] : nullptr) : resolve_module(caller).module;
  if (m == nullptr) return 0;
  return lazy_key(m->file_key, kKindFile, m->name, "file");
}

}  // namespace pfs::preload

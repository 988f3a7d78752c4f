// Functions of an ELF symbol table sorted by address (preload_symbols.h).
// System calls only for memory (the interposer's own mmap would count it).
#include "agent/preload/preload_symbols.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <new>

namespace pfs::preload {

// A header and then count entries, in memory of its own (build).
struct function_index {
  struct entry {
    ElfW(Addr) start;
    ElfW(Addr) end;      // start + size (at least 1)
    ElfW(Addr) max_end;  // the largest end of this entry and every one before it
    std::uint32_t name;
    std::uint32_t order;  // the symbol's place in the table (the first wins a tie)
  };
  const void* table_id;
  const char* strings;  // the table's
  std::size_t count;
  entry* entries() { return reinterpret_cast<entry*>(this + 1); }
  const entry* entries() const { return reinterpret_cast<const entry*>(this + 1); }
};
static_assert(sizeof(function_index) % alignof(function_index::entry) == 0);

namespace {

bool is_function(const symbol_table& t, const ElfW(Sym) & s) {
  const unsigned type = ELF64_ST_TYPE(s.st_info);
  return (type == STT_FUNC || (t.ifunc && type == STT_GNU_IFUNC)) && s.st_shndx != SHN_UNDEF &&
         s.st_value != 0 && s.st_name < t.strings_size;
}

ElfW(Addr) end_of(const ElfW(Sym) & s) { return s.st_value + (s.st_size != 0 ? s.st_size : 1); }

function_index* build(const void* table_id, const symbol_table& t) {
  if (t.count > UINT32_MAX) return nullptr;
  std::size_t n = 0;
  for (std::size_t i = 0; i < t.count; ++i) n += is_function(t, t.symbols[i]) ? 1 : 0;
  const std::size_t bytes = sizeof(function_index) + n * sizeof(function_index::entry);
  void* p = reinterpret_cast<void*>(
      syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (p == MAP_FAILED) return nullptr;
  auto* index = new (p) function_index{table_id, t.strings, n};
  function_index::entry* e = index->entries();
  std::size_t k = 0;
  for (std::size_t i = 0; i < t.count; ++i) {
    const ElfW(Sym)& s = t.symbols[i];
    if (is_function(t, s))
      e[k++] = {s.st_value, end_of(s), 0, static_cast<std::uint32_t>(s.st_name),
                static_cast<std::uint32_t>(i)};
  }
  std::sort(e, e + n, [](const function_index::entry& a, const function_index::entry& b) {
    return a.start != b.start ? a.start < b.start : a.order < b.order;
  });
  ElfW(Addr) max_end = 0;
  for (std::size_t i = 0; i < n; ++i) e[i].max_end = max_end = std::max(max_end, e[i].end);
  syscall(SYS_mprotect, p, bytes, PROT_READ);
  return index;
}

}  // namespace

bool scan_for_function(const symbol_table& t, ElfW(Addr) addr, const char** name, ElfW(Addr) * start) {
  const ElfW(Sym)* best = nullptr;
  for (std::size_t i = 0; i < t.count; ++i) {
    const ElfW(Sym)& s = t.symbols[i];
    if (!is_function(t, s)) continue;
    if (addr >= s.st_value && addr < end_of(s) && (best == nullptr || s.st_value > best->st_value)) best = &s;
  }
  if (best == nullptr) return false;
  *name = t.strings + best->st_name;
  *start = best->st_value;
  return true;
}

const function_index* lazy_function_index::index_of(std::uintptr_t w, const void* table_id) {
  if (w <= kUnbuildable) return nullptr;
  const auto* index = reinterpret_cast<const function_index*>(w);
  return index->table_id == table_id ? index : nullptr;
}

bool lazy_function_index::lookup(const function_index& index, ElfW(Addr) addr, const char** name,
                                 ElfW(Addr) * start) {
  const function_index::entry* e = index.entries();
  // The entries that start at or below addr: [0, upto).
  const std::size_t upto = static_cast<std::size_t>(
      std::upper_bound(e, e + index.count, addr,
                       [](ElfW(Addr) a, const function_index::entry& x) { return a < x.start; }) -
      e);
  const function_index::entry* best = nullptr;
  for (std::size_t i = upto; i-- > 0 && e[i].max_end > addr;) {
    if (best != nullptr && e[i].start != best->start) break;  // past the ties of the last start
    if (addr < e[i].end) best = &e[i];                        // a lower place in the table wins a tie
  }
  if (best == nullptr) return false;
  *name = index.strings + best->name;
  *start = best->start;
  return true;
}

bool lazy_function_index::build_or_scan(const void* table_id, const symbol_table& t, ElfW(Addr) addr,
                                        const char** name, ElfW(Addr) * start) {
  std::uintptr_t w = kNotBuilt;
  if (word_.compare_exchange_strong(w, kBuilding, std::memory_order_acq_rel)) {
    const function_index* built = build(table_id, t);
    w = built != nullptr ? reinterpret_cast<std::uintptr_t>(built) : kUnbuildable;
    word_.store(w, std::memory_order_release);
  }
  if (const function_index* index = index_of(w, table_id)) return lookup(*index, addr, name, start);
  return scan_for_function(t, addr, name, start);
}

}  // namespace pfs::preload

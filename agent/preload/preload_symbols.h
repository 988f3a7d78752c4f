// The function that contains an address, from an ELF symbol table: the module's
// dynamic symbols (preload_sites.cpp) or its debug file's .symtab
// (preload_debuginfo.cpp). A program's table holds thousands of functions, and a
// forked server's every child resolves the call sites its parent never reached:
// a scan of the whole table per call site cost PostgreSQL's backends milliseconds
// each. The first lookup in a table sorts its functions by address, once per
// module (memory of its own, no malloc), and every later one is a binary search.
#pragma once

#include <link.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace pfs::preload {

struct symbol_table {
  const ElfW(Sym) * symbols = nullptr;
  std::size_t count = 0;
  const char* strings = nullptr;
  std::size_t strings_size = 0;
  bool ifunc = false;  // STT_GNU_IFUNC symbols are functions too (the dynamic table's)
};

struct function_index;

// One table's index, built by its first lookup; a lookup that finds another
// thread building it scans the table instead of waiting (the builder may be a
// thread that a fork left behind).
class lazy_function_index {
 public:
  constexpr lazy_function_index() = default;
  // The function that contains file address addr (a symbol's value space) in the
  // table make_table() returns (called only to build the index, or to scan when
  // there is none): among the functions whose [value, value + size) holds addr
  // (size 0 counts as 1), the one that starts last, the first in the table among
  // equals. Its name (in the table's strings) and its start; false if none.
  // table_id names the table as it is loaded (a module's dynamic section in
  // memory): an index built for another (a library unloaded, another loaded in its
  // place under the same key) is not used.
  template <class MakeTable>
  bool find(const void* table_id, MakeTable make_table, ElfW(Addr) addr, const char** name,
            ElfW(Addr) * start) {
    if (const function_index* index = index_of(word_.load(std::memory_order_acquire), table_id))
      return lookup(*index, addr, name, start);
    const symbol_table t = make_table();
    return build_or_scan(table_id, t, addr, name, start);
  }

 private:
  static constexpr std::uintptr_t kNotBuilt = 0;
  static constexpr std::uintptr_t kBuilding = 1;
  static constexpr std::uintptr_t kUnbuildable = 2;
  // The index in word w if it is table_id's; nullptr if none.
  static const function_index* index_of(std::uintptr_t w, const void* table_id);
  static bool lookup(const function_index& index, ElfW(Addr) addr, const char** name, ElfW(Addr) * start);
  bool build_or_scan(const void* table_id, const symbol_table& t, ElfW(Addr) addr, const char** name,
                     ElfW(Addr) * start);
  // kNotBuilt, kBuilding, kUnbuildable (no memory), or a function_index*.
  std::atomic<std::uintptr_t> word_{kNotBuilt};
};

// The same answer by a scan of every symbol (the index's fallback; tests compare).
bool scan_for_function(const symbol_table& t, ElfW(Addr) addr, const char** name, ElfW(Addr) * start);

}  // namespace pfs::preload

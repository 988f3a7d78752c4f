// The LD_PRELOAD interposer (build/agent/libpfs_preload.so) on real programs: the
// edge-case programs of tests/preload_programs and, when installed, Debian's
// sysbench (mutex, threads and fileio tests). Each runs in a child process with
// LD_PRELOAD and PFS_REGION set; the region it leaves is read back with the
// reader library and compared with what the program says it did.
//
// Sanitizer builds: the interposer is built with the sanitizer too, so the
// sanitizer's runtime must come first in LD_PRELOAD; the tests put it there (the
// path of the runtime this test process loaded). sysbench is not instrumented,
// so the sysbench tests run in the normal build only.
//
// PFS_PRELOAD_REQUIRE_SYSBENCH=1 turns a missing sysbench into a failure (CI).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <link.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/reader/reader.h"
#include "tests/preload_util.h"
#include "tests/process_util.h"
// The call-site resolver (module, symbol, names) is tested in-process too: it has
// no interposed function and needs only the agent library.
#include "agent/preload/preload_debuginfo.cpp"  // NOLINT(bugprone-suspicious-include)
#include "agent/preload/preload_sites.cpp"      // NOLINT(bugprone-suspicious-include)
#include "agent/preload/preload_symbols.cpp"    // NOLINT(bugprone-suspicious-include)

namespace {

using namespace pfs_test;

using pfs::reader::region_reader;
using pfs::reader::row;

#if defined(__SANITIZE_THREAD__)
constexpr bool kTsan = true;
#else
constexpr bool kTsan = false;
#endif

std::string build_dir() { return PFS_BUILD_DIR; }
std::string preload_path() { return build_dir() + "/agent/libpfs_preload.so"; }
std::string program(const std::string& name) { return build_dir() + "/tests/preload_programs/" + name; }

std::string ld_preload() { return with_sanitizer_runtime(preload_path()); }

// s is prefix followed by "0x" and hex digits, then (if more is not empty) more
// and "0x" and hex digits again: "pl_calls:main+0x1a", "test_preload:0x1c40+0x1f".
bool hex_tail(const std::string& s, std::size_t pos) {
  if (s.compare(pos, 2, "0x") != 0 || pos + 2 >= s.size()) return false;
  for (std::size_t i = pos + 2; i < s.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}
bool matches(const std::string& s, const std::string& prefix, const std::string& more = {}) {
  if (s.compare(0, prefix.size(), prefix) != 0) return false;
  if (more.empty()) return hex_tail(s, prefix.size());
  const std::size_t at = s.find(more, prefix.size());
  if (at == std::string::npos) return false;
  return hex_tail(s.substr(0, at), prefix.size()) && hex_tail(s, at + more.size());
}

class Preload : public ::testing::Test {
 protected:
  void SetUp() override {
    struct stat st {};
    if (stat(preload_path().c_str(), &st) != 0) GTEST_SKIP() << "no " << preload_path() << " (not built)";
    if (kSanitized && sanitizer_runtime().empty())
      GTEST_SKIP() << "sanitizer build, but its runtime library was not found in this process";
    if (kTsan && !tsan_ok_)
      GTEST_SKIP() << "TSan build: TSan's own pthread interceptors come first in LD_PRELOAD and call the "
                      "interposer, so every call site resolves to libtsan and the class names these tests "
                      "check differ; PreloadUnderTsan runs the programs for their own checks instead";
    dir_ = temp_dir();
    region_ = dir_ + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".pfs";
    unlink(region_.c_str());
  }
  void TearDown() override {
    if (!region_.empty()) unlink(region_.c_str());
  }
  std::vector<std::string> env(const std::string& instrument = "%=ON") const {
    std::vector<std::string> e = {"LD_PRELOAD=" + ld_preload(), "PFS_REGION=" + region_};
    if (!instrument.empty()) e.push_back("PFS_INSTRUMENT=" + instrument);
    if (kSanitized) e.push_back("ASAN_OPTIONS=detect_leaks=0");
    return e;
  }
  std::string dir_, region_;
  bool tsan_ok_ = false;  // the test checks nothing that TSan's interceptors change
};

// TSan build: the programs (TSan-instrumented) under TSan's runtime and the
// TSan-built interposer; their own result and errno checks must pass, with no
// race reported in the interposer.
class PreloadUnderTsan : public Preload {
 protected:
  void SetUp() override {
    if (!kTsan) GTEST_SKIP() << "TSan build only (the other builds run the full Preload tests)";
    tsan_ok_ = true;
    Preload::SetUp();
  }
};

TEST_F(PreloadUnderTsan, ProgramsRunCorrectly) {
  std::vector<std::string> e = env();
  // report_mutex_bugs=0: pl_calls unlocks an unlocked error-checking mutex on purpose (EPERM).
  e.push_back("TSAN_OPTIONS=halt_on_error=1 exitcode=66 report_signal_unsafe=0 report_mutex_bugs=0");
  run_result calls = run({program("pl_calls"), dir_}, e);
  EXPECT_EQ(calls.status, 0) << calls.out;
  unlink(region_.c_str());
  run_result many = run({program("pl_many_threads"), dir_, "200", "8"}, e);
  EXPECT_EQ(many.status, 0) << many.out;
}

// ---------------------------------------------------------------------------
// Name helpers (in-process)

TEST(PreloadNames, ModulesBecomeCategories) {
  char out[40];
  pfs::preload::sanitize_module("/lib/x86_64-linux-gnu/libc.so.6", out, sizeof(out));
  EXPECT_STREQ(out, "libc");
  pfs::preload::sanitize_module("/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", out, sizeof(out));
  EXPECT_STREQ(out, "libstdcpp");
  pfs::preload::sanitize_module("/usr/bin/my-app.v2", out, sizeof(out));
  EXPECT_STREQ(out, "my_app_v2");
  pfs::preload::sanitize_module("", out, sizeof(out));
  EXPECT_STREQ(out, "unknown");
  pfs::preload::sanitize_module("/x/.so", out, sizeof(out));
  EXPECT_STREQ(out, "_so");
  char small[5];
  pfs::preload::sanitize_module("abcdefgh", small, sizeof(small));
  EXPECT_STREQ(small, "abcd");
}

TEST(PreloadNames, SymbolsKeepTheNameAlphabet) {
  char out[64];
  pfs::preload::sanitize_symbol("_ZN3foo3barEv.cold", out, sizeof(out));
  EXPECT_STREQ(out, "_ZN3foo3barEv.cold");
  pfs::preload::sanitize_symbol("a/b c%d", out, sizeof(out));
  EXPECT_STREQ(out, "a_b_c_d");
  pfs::preload::sanitize_symbol(nullptr, out, sizeof(out));
  EXPECT_STREQ(out, "unknown");
}

extern "C" __attribute__((noinline)) const void* pl_test_caller() { return __builtin_return_address(0); }

TEST(PreloadSites, CallerResolvedToModuleFunctionAndOffset) {
  ASSERT_TRUE(pfs::preload::init_sites());
  // A caller in this program (not exported: named by its function's start from
  // the unwind table).
  const void* here = pl_test_caller();
  pfs::preload::call_site* s = pfs::preload::site_of(here);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(pfs::preload::site_of(here), s);  // cached
  EXPECT_TRUE(matches(s->source, "test_preload:", "+")) << s->source;
  EXPECT_TRUE(matches(s->symbol, "")) << s->symbol;
  // An exported function of the C library: named by its dynamic symbol.
  const void* in_libc = reinterpret_cast<const char*>(&::getpid) + 1;
  pfs::preload::call_site* l = pfs::preload::site_of(in_libc);
  ASSERT_NE(l, nullptr);
  const std::string libc_source = l->source;
  EXPECT_TRUE(libc_source.rfind("libc:", 0) == 0 && libc_source.find("getpid+0x1") != std::string::npos)
      << libc_source;
}

// The sorted index of a symbol table answers every address as a scan of the whole
// table does: the function that starts last among those that hold it, the first
// in the table among equals, sizes of 0 counting as 1.
TEST(PreloadSites, FunctionIndexAnswersAsTheScan) {
  auto sym = [](std::uint32_t name, unsigned type, ElfW(Addr) value, ElfW(Xword) size,
                std::uint16_t shndx = 1) {
    ElfW(Sym) s{};
    s.st_name = name;
    s.st_info = static_cast<unsigned char>(ELF64_ST_INFO(STB_GLOBAL, type));
    s.st_shndx = shndx;
    s.st_value = value;
    s.st_size = size;
    return s;
  };
  const char strings[] =
      "\0outer\0alias\0inner\0point\0object\0undef\0ifunc\0after\0short\0long\0wraps\0other";
  const ElfW(Sym) symbols[] = {
      sym(0, STT_NOTYPE, 0, 0),      sym(1, STT_FUNC, 100, 50),
      sym(7, STT_FUNC, 100, 20),     sym(13, STT_FUNC, 110, 5),
      sym(19, STT_FUNC, 200, 0),     sym(25, STT_OBJECT, 300, 10),
      sym(32, STT_FUNC, 320, 10, 0), sym(38, STT_GNU_IFUNC, 400, 10),
      sym(44, STT_FUNC, 140, 100),   sym(50, STT_FUNC, 600, 5),
      sym(56, STT_FUNC, 600, 20),    sym(61, STT_FUNC, ~ElfW(Addr){0} - 9, 100),
  };
  auto table_of = [&](const ElfW(Sym) * syms, std::size_t count, bool ifunc) {
    pfs::preload::symbol_table t;
    t.symbols = syms;
    t.count = count;
    t.strings = strings;
    t.strings_size = sizeof(strings);
    t.ifunc = ifunc;
    return t;
  };
  // The name the index finds at a, checked against the scan's.
  auto name_at = [](pfs::preload::lazy_function_index& index, const void* id,
                    const pfs::preload::symbol_table& t, ElfW(Addr) a) -> std::string {
    const char* n = nullptr;
    ElfW(Addr) start = 0;
    const bool found = index.find(
        id, [&] { return t; }, a, &n, &start);
    const char* scan_name = nullptr;
    ElfW(Addr) scan_start = 0;
    EXPECT_EQ(found, pfs::preload::scan_for_function(t, a, &scan_name, &scan_start)) << a;
    if (!found) return "";
    EXPECT_EQ(n, scan_name) << a;
    EXPECT_EQ(start, scan_start) << a;
    return n;
  };
  for (const bool ifunc : {false, true}) {
    const pfs::preload::symbol_table t = table_of(symbols, std::size(symbols), ifunc);
    pfs::preload::lazy_function_index index;
    auto at = [&](ElfW(Addr) a) { return name_at(index, symbols, t, a); };
    for (ElfW(Addr) a = 0; a < 700; ++a) at(a);
    for (ElfW(Addr) a = ~ElfW(Addr){0} - 20; a != 0; ++a) at(a);  // a function whose end wraps: never found
    EXPECT_EQ(at(105), "outer");  // outer and alias both start at 100: the first in the table
    EXPECT_EQ(at(112), "inner");
    EXPECT_EQ(at(145), "after");  // after (140) starts later than outer (100)
    EXPECT_EQ(at(200), "point");  // point (size 0) starts later still: 200 only
    EXPECT_EQ(at(201), "after");
    EXPECT_EQ(at(239), "after");
    EXPECT_EQ(at(240), "");
    EXPECT_EQ(at(305), "");  // an object, not a function
    EXPECT_EQ(at(325), "");  // undefined
    EXPECT_EQ(at(405), ifunc ? "ifunc" : "");
    EXPECT_EQ(at(602), "short");  // short and long start at 600: the first in the table...
    EXPECT_EQ(at(610), "long");   // ...where it holds the address
  }
  // An index built for one table is not used for another under the same key (a
  // library unloaded and another loaded in its place): the other table answers.
  const ElfW(Sym) others[] = {sym(0, STT_NOTYPE, 0, 0), sym(67, STT_FUNC, 100, 10)};
  pfs::preload::lazy_function_index index;
  EXPECT_EQ(name_at(index, symbols, table_of(symbols, std::size(symbols), false), 105), "outer");
  EXPECT_EQ(name_at(index, others, table_of(others, std::size(others), false), 105), "other");
  EXPECT_EQ(name_at(index, symbols, table_of(symbols, std::size(symbols), false), 105), "outer");
  // The C library's dynamic symbols (thousands, aliases, IFUNCs): at each function's
  // ends and just outside them.
  dl_find_object fo{};
  ASSERT_EQ(_dl_find_object(reinterpret_cast<void*>(&::getpid), &fo), 0);
  const link_map* lm = fo.dlfo_link_map;
  pfs::preload::symbol_table t;
  t.ifunc = true;
  for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB)
      t.symbols = reinterpret_cast<const ElfW(Sym)*>(pfs::preload::dyn_ptr(lm, d->d_un.d_ptr));
    if (d->d_tag == DT_STRTAB)
      t.strings = reinterpret_cast<const char*>(pfs::preload::dyn_ptr(lm, d->d_un.d_ptr));
    if (d->d_tag == DT_STRSZ) t.strings_size = d->d_un.d_val;
    if (d->d_tag == DT_GNU_HASH)
      t.count = pfs::preload::gnu_hash_symbol_count(
          reinterpret_cast<const std::uint32_t*>(pfs::preload::dyn_ptr(lm, d->d_un.d_ptr)));
  }
  ASSERT_NE(t.symbols, nullptr);
  ASSERT_GT(t.count, 1000u);
  pfs::preload::lazy_function_index libc_index;
  std::size_t checked = 0, found = 0;
  for (std::size_t i = 0; i < t.count; ++i) {
    const ElfW(Sym)& s = t.symbols[i];
    if (ELF64_ST_TYPE(s.st_info) != STT_FUNC) continue;
    for (const ElfW(Addr) a : {s.st_value - 1, s.st_value, s.st_value + s.st_size / 2,
                               s.st_value + s.st_size - 1, s.st_value + s.st_size}) {
      const char* n1 = nullptr;
      const char* n2 = nullptr;
      ElfW(Addr) s1 = 0, s2 = 0;
      const bool f1 = libc_index.find(
          lm->l_ld, [&] { return t; }, a, &n1, &s1);
      ASSERT_EQ(f1, pfs::preload::scan_for_function(t, a, &n2, &s2)) << a;
      if (f1) {
        ASSERT_EQ(n1, n2) << a;
        ASSERT_EQ(s1, s2) << a;
        ++found;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 5000u);
  EXPECT_GT(found, checked / 2);
}

// ---------------------------------------------------------------------------
// Edge-case programs

// A stripped program (issue 40): its function named by offset, or by name once its
// build-id debug file is installed (as Debian's -dbgsym packages install them, here
// under PFS_DEBUG_DIR in place of /usr/lib/debug).
TEST_F(Preload, StrippedProgramNamedFromItsBuildIdDebugFile) {
  if (std::system("command -v objcopy >/dev/null && command -v readelf >/dev/null") != 0)
    GTEST_SKIP() << "binutils (objcopy, readelf) is not installed";
  const std::string work = dir_ + "/stripped";
  const std::string prog = work + "/pl_stripped";
  mkdir(work.c_str(), 0700);
  ASSERT_EQ(std::system(("objcopy --strip-all " + program("pl_stripped") + " " + prog).c_str()), 0);
  run_result id = run({"/bin/sh", "-c", "readelf -n " + prog + " | sed -n 's/.*Build ID: //p'"}, {});
  std::string build_id = id.out.substr(0, id.out.find_first_of(" \n"));
  ASSERT_GT(build_id.size(), 2u) << id.out;
  const std::string debug = work + "/debug/.build-id/" + build_id.substr(0, 2);
  ASSERT_EQ(std::system(("mkdir -p " + debug).c_str()), 0);
  ASSERT_EQ(std::system(("objcopy --only-keep-debug " + program("pl_stripped") + " " + debug + "/" +
                         build_id.substr(2) + ".debug")
                            .c_str()),
            0);
  auto classes = [&](const std::string& debug_dir) {
    unlink(region_.c_str());
    std::vector<std::string> e = env();
    e.push_back("PFS_DEBUG_DIR=" + debug_dir);
    run_result r = run({prog}, e);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(value(r, "locks"), 100);
    tables t(region_);
    std::map<std::string, std::int64_t> found;
    for (auto& c : t.rows("events_waits_summary_global_by_event_name"))
      if (c["event_name"].s.rfind("wait/synch/mutex/pl_stripped/", 0) == 0 && c["count_star"].i > 0)
        found[c["event_name"].s.substr(29)] = c["count_star"].i;
    return found;
  };
  const auto named = classes(work + "/debug");
  EXPECT_EQ(named, (std::map<std::string, std::int64_t>{{"pl_stripped_init", 100}}));
  const auto by_offset = classes(work + "/no-debug-files-here");
  ASSERT_EQ(by_offset.size(), 1u);
  EXPECT_TRUE(matches(by_offset.begin()->first, "")) << by_offset.begin()->first;
  EXPECT_EQ(by_offset.begin()->second, 100);
}

TEST_F(Preload, EveryCallRecordedWithResultsAndErrnoUntouched) {
  run_result r = run({program("pl_calls"), dir_}, env());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(value(r, "failures"), 0);
  tables t(region_);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.status("pid") > 0, true);
  // Objects initialized in a named function: wait/synch/mutex/<module>/<symbol>.
  const std::int64_t work = t.count_star("wait/synch/mutex/pl_calls/pl_init_work_mutex");
  EXPECT_GE(work, value(r, "work_mutex_locks_min"));
  EXPECT_LE(work, value(r, "work_mutex_locks_min") + 10);
  // Statically initialized objects: one class per module, registered on first use.
  EXPECT_GE(t.count_star("wait/synch/mutex/pl_calls/static"), value(r, "static_mutex_locks"));
  EXPECT_GE(t.count_star("wait/synch/rwlock/pl_calls/main"), 7);
  EXPECT_EQ(t.count_star("wait/synch/rwlock/pl_calls/static"), 1);
  // Two condition waits: 20 ms until signalled, 10 ms until the timeout.
  auto cond =
      t.row_where("events_waits_summary_global_by_event_name", "event_name", "wait/synch/cond/pl_calls/main");
  ASSERT_FALSE(cond.empty());
  EXPECT_EQ(cond["count_star"].i, 2);
  EXPECT_GE(cond["sum_timer_wait"].i, std::int64_t{25} * 1000 * 1000 * 1000);  // >= 25 ms in ps
  // The contended lock waited about 30 ms.
  auto stat = t.row_where("events_waits_summary_global_by_event_name", "event_name",
                          "wait/synch/mutex/pl_calls/static");
  EXPECT_GE(stat["max_timer_wait"].i, std::int64_t{20} * 1000 * 1000 * 1000);
  // File io: reads and writes with their bytes.
  auto file = t.row_where("file_summary_by_event_name", "event_name", "wait/io/file/pl_calls/file");
  ASSERT_FALSE(file.empty());
  EXPECT_EQ(file["count_write"].i, value(r, "file_writes"));
  EXPECT_EQ(file["sum_number_of_bytes_write"].i, value(r, "file_write_bytes"));
  EXPECT_EQ(file["count_read"].i, value(r, "file_reads") + 2);  // + 2 reads of the renamed file
  EXPECT_EQ(file["sum_number_of_bytes_read"].i, value(r, "file_read_bytes") + 1800);
  EXPECT_GE(file["count_misc"].i, 10);  // open, create, seek, sync, close, rename, delete
  // SOURCE: module:symbol+offset of the caller.
  bool lock_source = false, file_source = false;
  std::map<std::string, int> operations;
  for (auto& e : t.rows("events_waits_history_long")) {
    const std::string& src = e["source"].null ? std::string() : e["source"].s;
    lock_source |= matches(src, "pl_calls:pl_lock_work_mutex+");
    file_source |= e["event_name"].s == "wait/io/file/pl_calls/file" && src.rfind("pl_calls:main+0x", 0) == 0;
    ++operations[e["operation"].s];
  }
  EXPECT_TRUE(lock_source);
  EXPECT_TRUE(file_source);
  // Every acquisition is timed from before its first try, taken then or not
  // (WL#2360): no lock or try-lock wait of 0, and MIN_TIMER_WAIT above 0.
  int untimed = 0, locks = 0;
  for (auto& e : t.rows("events_waits_history_long")) {
    const std::string op = e["operation"].null ? std::string() : e["operation"].s;
    if (op.find("lock") == std::string::npos || e["timer_wait"].null) continue;
    ++locks;
    if (e["timer_wait"].i <= 0) ++untimed;
  }
  EXPECT_GT(locks, 10);
  EXPECT_EQ(untimed, 0);
  auto work_row = t.row_where("events_waits_summary_global_by_event_name", "event_name",
                              "wait/synch/mutex/pl_calls/pl_init_work_mutex");
  ASSERT_FALSE(work_row.empty());
  EXPECT_GT(work_row["min_timer_wait"].i, 0);
  EXPECT_GE(work_row["avg_timer_wait"].i, work_row["min_timer_wait"].i);
  for (const char* op :
       {"lock", "try_lock", "read_lock", "write_lock", "try_read_lock", "try_write_lock", "wait",
        "timed_wait", "create", "open", "read", "write", "seek", "sync", "close", "rename", "delete"})
    EXPECT_GT(operations[op], 0) << op;
  EXPECT_TRUE(t.lost().empty()) << ::testing::PrintToString(t.lost());
}

// stdio streams, vector io and kernel copies (issue 40): every call's bytes exact,
// on the stream's file, each file under its absolute name though the program
// opened it relative to its working directory or to a directory descriptor.
TEST_F(Preload, StdioAndVectorIoOfKnownSizes) {
  const std::string work = dir_ + "/stdio";
  mkdir(work.c_str(), 0700);
  run_result r = run({program("pl_stdio"), work}, env());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(value(r, "failures"), 0);
  tables t(region_);
  ASSERT_TRUE(t.ok());
  const std::string at = std::filesystem::canonical(work).string() + "/";
  struct expected {
    const char* name;
    std::int64_t reads, read_bytes, writes, write_bytes, misc;
  };
  // misc: stdio.txt create, flush, close, open, seek, tell, close; first.txt create,
  // close (by freopen); second.txt create, close; unlocked.txt create, flush, seek, close; vector.bin create,
  // close; the copies create, close; new.bin (old.bin renamed by renameat) create, close, rename.
  for (const expected& x :
       {expected{"stdio.txt", 4, 50 + 256 + 306, 2, 300 + 6, 7}, expected{"first.txt", 0, 0, 0, 0, 2},
        expected{"second.txt", 0, 0, 1, 3, 2}, expected{"unlocked.txt", 1, 64, 1, 64, 4},
        expected{"vector.bin", 6, 12 + 360 + 400 + 400 + 100 + 100, 3, 60 + 300 + 40, 2},
        expected{"copy.bin", 0, 0, 1, 400, 2}, expected{"copy2.bin", 0, 0, 1, 400, 2},
        expected{"copy3.bin", 0, 0, 1, 100, 2}, expected{"new.bin", 0, 0, 1, 10, 3}}) {
    auto f = t.row_where("file_summary_by_instance", "file_name", at + x.name);
    ASSERT_FALSE(f.empty()) << at + x.name;
    // (Under a sanitizer its runtime intercepts fopen first and calls this one: the
    // class is the runtime's module's.)
    if (!kSanitized) {
      EXPECT_EQ(f["event_name"].s, "wait/io/file/pl_stdio/file") << x.name;
    }
    EXPECT_EQ(f["count_read"].i, x.reads) << x.name;
    EXPECT_EQ(f["sum_number_of_bytes_read"].i, x.read_bytes) << x.name;
    EXPECT_EQ(f["count_write"].i, x.writes) << x.name;
    EXPECT_EQ(f["sum_number_of_bytes_write"].i, x.write_bytes) << x.name;
    EXPECT_EQ(f["count_misc"].i, x.misc) << x.name;
  }
  // No file under a bare or relative name, and the missing file left no row.
  for (auto& f : t.rows("file_summary_by_instance")) {
    EXPECT_EQ(f["file_name"].s[0], '/') << f["file_name"].s;
    EXPECT_EQ(f["file_name"].s.find("missing.txt"), std::string::npos);
    EXPECT_NE(f["file_name"].s, at + "old.bin");   // renamed: its row is new.bin's
    EXPECT_NE(f["file_name"].s, at + "gone.bin");  // deleted
    EXPECT_NE(f["file_name"].s, at + "sub");       // a directory
  }
  // sendfile into a socket: its send, then the other end's read (a recv).
  auto sock = t.row_where("socket_summary_by_event_name", "event_name", "wait/io/socket/preload/unix");
  ASSERT_FALSE(sock.empty());
  EXPECT_EQ(sock["count_write"].i, 1);
  EXPECT_EQ(sock["sum_number_of_bytes_write"].i, 100);
  EXPECT_EQ(sock["sum_number_of_bytes_read"].i, 100);
  std::map<std::string, int> operations;
  for (auto& e : t.rows("events_waits_history_long"))
    if (e["event_name"].s.rfind("wait/io/file/", 0) == 0) ++operations[e["operation"].s];
  for (const char* op :
       {"create", "open", "read", "write", "flush", "seek", "tell", "close", "rename", "delete"})
    EXPECT_GT(operations[op], 0) << op;
  EXPECT_TRUE(t.lost().empty()) << ::testing::PrintToString(t.lost());
}

// Spin locks and barriers (issue 40), on the existing kinds: a spin lock is a
// mutex (class from pthread_spin_init's caller), a barrier wait a condition wait
// (class from pthread_barrier_init's caller); counts exact, results as the C library's.
TEST_F(Preload, SpinLocksAndBarriersCountedAsMutexesAndConditions) {
  run_result r = run({program("pl_spin")}, env());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(value(r, "failures"), 0);
  tables t(region_);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.count_star("wait/synch/mutex/pl_spin/pl_spin_init_locks"), value(r, "spin_locks"));
  EXPECT_EQ(t.count_star("wait/synch/cond/pl_spin/pl_spin_init_locks"), value(r, "barrier_waits"));
  std::map<std::string, int> ops;
  for (auto& e : t.rows("events_waits_history_long"))
    if (e["event_name"].s.rfind("wait/synch/", 0) == 0 &&
        e["event_name"].s.find("/pl_spin/") != std::string::npos)
      ++ops[(e["event_name"].s.find("/mutex/") != std::string::npos ? "mutex " : "cond ") + e["operation"].s];
  EXPECT_EQ(ops["mutex try_lock"], 2);
  EXPECT_EQ(ops["mutex lock"], value(r, "spin_locks") - 2);
  EXPECT_EQ(ops["cond wait"], value(r, "barrier_waits"));
  EXPECT_TRUE(t.lost().empty()) << ::testing::PrintToString(t.lost());
}

// POSIX semaphores (issue 40): waits of class wait/synch/sem/<module>/<sem_init's
// caller> (a named one: wait/synch/sem/<program>/<name>), OBJECT_TYPE 'SEMAPHORE',
// instances in sem_instances; counts exact; errno, EINTR and cancellation as the C
// library's (pl_sem checks them and fails otherwise).
TEST_F(Preload, SemaphoresCountedWithTheirOwnClasses) {
  run_result r = run({program("pl_sem")}, env());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(value(r, "failures"), 0);
  tables t(region_);
  ASSERT_TRUE(t.ok());
  const std::string lock_class = "wait/synch/sem/pl_sem/pl_sem_init_lock";
  const std::string gate_class = "wait/synch/sem/pl_sem/pl_sem_init_gate";
  const std::string named = "wait/synch/sem/pl_sem/" + r.values["named_class"];
  EXPECT_EQ(t.count_star(lock_class),
            value(r, "sem_waits") + value(r, "try_waits") + value(r, "timed_waits"));
  EXPECT_EQ(t.count_star(gate_class), value(r, "gate_waits"));  // the cancelled ones never end
  EXPECT_EQ(t.count_star(named), value(r, "named_waits"));
  std::map<std::string, int> ops;
  for (auto& e : t.rows("events_waits_history_long"))
    if (e["event_name"].s == lock_class) {
      ++ops[e["operation"].s];
      EXPECT_EQ(e["object_type"].s, "SEMAPHORE");
    }
  EXPECT_EQ(ops["try_wait"], value(r, "try_waits"));
  EXPECT_EQ(ops["timed_wait"], value(r, "timed_waits"));
  EXPECT_EQ(ops["wait"], value(r, "sem_waits"));
  // lock and gate live on; free_sem was destroyed and the named one closed.
  std::map<std::string, int> instances;
  for (auto& e : t.rows("sem_instances")) ++instances[e["name"].s];
  EXPECT_EQ(instances[lock_class], 1);
  EXPECT_EQ(instances[gate_class], 1);
  EXPECT_EQ(instances[named], 0);
  auto setup = t.row_where("setup_instruments", "name", lock_class);
  ASSERT_FALSE(setup.empty());
  EXPECT_EQ(setup["enabled"].s, "YES");
  EXPECT_TRUE(t.lost().empty()) << ::testing::PrintToString(t.lost());
}

// Descriptors the program inherits (issue 40): stdin and stdout are files the parent
// opened (as a shell's `< in.txt > out.txt`), so the program calls no open; they are
// bound at start-up, by name, and their bytes counted; a copy made with
// fcntl(F_DUPFD_CLOEXEC) writes to the same file.
TEST_F(Preload, InheritedDescriptorsAreTheirFiles) {
  const std::string at = std::filesystem::canonical(dir_).string() + "/";
  const std::string in = at + "inherited_in.txt", out = at + "inherited_out.txt",
                    err = at + "inherited_err.txt";
  constexpr int kInput = 4321;
  std::ofstream(in) << std::string(kInput, 'i');
  const std::string path = program("pl_inherit");
  std::vector<std::string> env_text = env();
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int i = open(in.c_str(), O_RDONLY), o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600),
              e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (i < 0 || o < 0 || e < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(126);
    char* argv[] = {const_cast<char*>(path.c_str()), nullptr};
    execve(path.c_str(), argv, envp.data());
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  std::ifstream err_file(err);
  const std::string said((std::istreambuf_iterator<char>(err_file)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << said;
  EXPECT_NE(said.find("failures=0"), std::string::npos) << said;
  EXPECT_EQ(std::filesystem::file_size(out), 3000u + 1234u);  // pl_inherit's written + dup_written
  tables t(region_);
  ASSERT_TRUE(t.ok());
  auto input = t.row_where("file_summary_by_instance", "file_name", in);
  ASSERT_FALSE(input.empty()) << "stdin's file is not bound";
  EXPECT_EQ(input["sum_number_of_bytes_read"].i, kInput);
  EXPECT_EQ(input["event_name"].s, "wait/io/file/pl_inherit/file");
  auto output = t.row_where("file_summary_by_instance", "file_name", out);
  ASSERT_FALSE(output.empty()) << "stdout's file is not bound";
  EXPECT_EQ(output["sum_number_of_bytes_write"].i, 3000 + 1234);
  EXPECT_EQ(output["count_write"].i, 2);
}

// Debian's python3 (issue 40): Python 3.11's threading.Lock is a POSIX semaphore.
// kThreads threads take one lock kTimes each; the switch interval is long, so a
// thread runs its loop without being preempted and every acquisition is one
// sem_trywait that takes it (Python tries first). The interpreter's own locks
// (thread start, join) are the same in a run with no acquisitions: the difference
// in the semaphore classes is exactly kThreads x kTimes.
TEST_F(Preload, PythonThreadingLockCountedExactly) {
  if (kSanitized) GTEST_SKIP() << "Debian's programs are not built with the sanitizer; normal build only";
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "Debian's python3 is not installed";
  constexpr int kThreads = 4, kTimes = 2500;
  const char* script =
      "import sys, threading\n"
      "sys.setswitchinterval(1000)\n"
      "n, k = int(sys.argv[1]), int(sys.argv[2])\n"
      "lock = threading.Lock()\n"
      "count = 0\n"
      "def work():\n"
      "    global count\n"
      "    for _ in range(k):\n"
      "        with lock:\n"
      "            count += 1\n"
      "ts = [threading.Thread(target=work) for _ in range(n)]\n"
      "for t in ts: t.start()\n"
      "for t in ts: t.join()\n"
      "print('acquisitions=%d' % count)\n";
  auto sem_waits = [&](int times) -> std::int64_t {
    unlink(region_.c_str());
    run_result r =
        run({"/usr/bin/python3", "-c", script, std::to_string(kThreads), std::to_string(times)}, env(), 120);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(value(r, "acquisitions"), std::int64_t{kThreads} * times);
    tables t(region_);
    std::int64_t n = 0;
    for (auto& c : t.rows("events_waits_summary_global_by_event_name"))
      if (c["event_name"].s.rfind("wait/synch/sem/python3/", 0) == 0) n += c["count_star"].i;
    EXPECT_TRUE(t.lost().empty()) << ::testing::PrintToString(t.lost());
    return n;
  };
  const std::int64_t idle = sem_waits(0);
  EXPECT_GT(idle, 0);  // the interpreter's own
  EXPECT_EQ(sem_waits(kTimes) - idle, std::int64_t{kThreads} * kTimes);
}

// Debian's coreutils (issue 40): whatever calls they use (sort: fread_unlocked,
// and fwrite_unlocked to stdout dup2'ed from its -o file; cat: read; cp:
// copy_file_range), the bytes of the generated file are all counted, under its
// absolute name.
TEST_F(Preload, CoreutilsBytesEqualTheFileSize) {
  if (kSanitized) GTEST_SKIP() << "Debian's programs are not built with the sanitizer; normal build only";
  const std::string work = dir_ + "/coreutils";
  mkdir(work.c_str(), 0700);
  const std::string at = std::filesystem::canonical(work).string() + "/";
  std::int64_t size = 0;
  {
    std::ofstream in(work + "/input.txt");
    for (int i = 0; i < 100000; ++i) {
      const std::string line = std::to_string((i * 7919) % 100003) + "\n";
      in << line;
      size += static_cast<std::int64_t>(line.size());
    }
  }
  auto bytes = [&](const std::string& name, const char* column) -> std::int64_t {
    tables t(region_);
    auto f = t.row_where("file_summary_by_instance", "file_name", at + name);
    return f.empty() ? -1 : f[column].i;
  };
  struct program {
    std::vector<std::string> argv;
    const char* output;  // the file it writes, or nullptr
  };
  for (const program& p :
       {program{{"/usr/bin/sort", "--parallel=2", "-o", "sorted.txt", "input.txt"}, "sorted.txt"},
        program{{"/usr/bin/cat", "input.txt"}, nullptr},
        program{{"/usr/bin/cp", "input.txt", "copy.txt"}, "copy.txt"}}) {
    unlink(region_.c_str());
    run_result r = run(p.argv, env(), 120, work);
    ASSERT_EQ(r.status, 0) << p.argv[0] << ": " << r.out;
    EXPECT_EQ(bytes("input.txt", "sum_number_of_bytes_read"), size) << p.argv[0];
    if (p.output != nullptr) {
      EXPECT_EQ(bytes(p.output, "sum_number_of_bytes_write"), size) << p.argv[0];
    }
  }
}

// Sockets under the interposer: made by socket/accept/socketpair, or found with
// fstat on their first io (a socket from a raw system call); read and write on a
// socket are its recv and send; a pipe stays out.
TEST_F(Preload, SocketIoIsRecordedAsSocketWaits) {
  run_result r = run({program("pl_sockets")}, env());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(value(r, "failures"), 0);
  tables t(region_);
  ASSERT_TRUE(t.ok());
  const long port = value(r, "port");
  // Still open at exit: the listener, the accepted connection, one end of the pair.
  std::map<std::string, int> classes;
  bool listener = false, accepted = false;
  for (auto& s : t.rows("socket_instances")) {
    ++classes[s["event_name"].s];
    if (s["event_name"].s != "wait/io/socket/preload/tcp") continue;
    EXPECT_EQ(s["ip"].s, "127.0.0.1");
    EXPECT_EQ(s["state"].s, "ACTIVE");
    EXPECT_FALSE(s["thread_id"].null);
    listener |= s["port"].i == port;
    accepted |= s["port"].i != port && s["port"].i > 0;
  }
  EXPECT_EQ(classes, (std::map<std::string, int>{{"wait/io/socket/preload/tcp", 2},
                                                 {"wait/io/socket/preload/unix", 1}}));
  EXPECT_TRUE(listener);
  EXPECT_TRUE(accepted);
  auto tcp = t.row_where("socket_summary_by_event_name", "event_name", "wait/io/socket/preload/tcp");
  ASSERT_FALSE(tcp.empty());
  EXPECT_EQ(tcp["sum_number_of_bytes_write"].i, 256 + 40);  // client send + write, server send
  EXPECT_EQ(tcp["sum_number_of_bytes_read"].i, 256 + 40);
  EXPECT_EQ(tcp["count_write"].i, 3);
  EXPECT_GE(tcp["count_read"].i, value(r, "server_reads") + 1);  // + the client's recv calls
  auto unix_row = t.row_where("socket_summary_by_event_name", "event_name", "wait/io/socket/preload/unix");
  ASSERT_FALSE(unix_row.empty());
  EXPECT_EQ(unix_row["sum_number_of_bytes_write"].i, 30 + 12);  // sendmsg, and the raw pair's write (fstat)
  EXPECT_EQ(unix_row["sum_number_of_bytes_read"].i, 30 + 12);
  std::map<std::string, int> ops;
  for (auto& e : t.rows("events_waits_history_long")) {
    if (e["event_name"].s.rfind("wait/io/socket/preload/", 0) != 0) continue;
    ++ops[e["operation"].s];
    EXPECT_EQ(e["object_type"].s, "SOCKET");
    if (e["event_name"].s == "wait/io/socket/preload/tcp" && e["operation"].s == "send" &&
        e["number_of_bytes"].i == 40) {
      EXPECT_EQ(e["object_name"].s.rfind("127.0.0.1:", 0), 0u) << e["object_name"].s;
    }
  }
  for (const char* op : {"bind", "opt", "connect", "send", "recv", "sendmsg", "recvmsg", "close"})
    EXPECT_GT(ops[op], 0) << op;
  EXPECT_EQ(ops["connect"], 2);  // the client's connect, the listener's accept
  // No file waits on sockets or on the pipe (they were not opened by name).
  for (auto& e : t.rows("file_summary_by_event_name")) EXPECT_EQ(e["count_read"].i, 0) << e["event_name"].s;
  EXPECT_TRUE(t.lost().empty()) << ::testing::PrintToString(t.lost());
}

// Who blocks whom under the interposer: the contended lock of pl_calls names main
// (its holder) and main's acquisition; lock_contention_by_instance counts that
// wait under main's call site; the signalled condition wait names the signaller.
TEST_F(Preload, ContendedWaitsNameTheirHolderAndSignaller) {
  run_result r = run({program("pl_calls"), dir_}, env());
  ASSERT_EQ(r.status, 0) << r.out;
  tables t(region_);
  ASSERT_TRUE(t.ok());
  const auto waits = t.rows("events_waits_history_long");
  auto by_event = [&](std::int64_t thread, std::int64_t event) {
    for (const auto& e : waits)
      if (e.at("thread_id").i == thread && e.at("event_id").i == event) return e;
    return std::map<std::string, pfs::reader::cell>{};
  };
  int contended = 0;
  for (const auto& e : waits) {
    if (e.at("event_name").s != "wait/synch/mutex/pl_calls/static" ||
        e.at("timer_wait").i < std::int64_t{20} * 1000 * 1000 * 1000)
      continue;
    ++contended;  // the contender's lock, held 30 ms by main
    ASSERT_FALSE(e.at("blocking_thread_id").null);
    ASSERT_FALSE(e.at("blocking_event_id").null);
    EXPECT_NE(e.at("blocking_thread_id").i, e.at("thread_id").i);
    const auto held = by_event(e.at("blocking_thread_id").i, e.at("blocking_event_id").i);
    ASSERT_FALSE(held.empty()) << "the holder's acquisition is in history_long";
    EXPECT_EQ(held.at("operation").s, "lock");
    EXPECT_EQ(held.at("object_instance_begin").i, e.at("object_instance_begin").i);
    EXPECT_TRUE(matches(held.at("source").s, "pl_calls:main+")) << held.at("source").s;
    // lock_contention_by_instance: that one wait, under main's call site.
    int rows = 0;
    for (const auto& c : t.rows("lock_contention_by_instance")) {
      if (c.at("object_instance_begin").i != e.at("object_instance_begin").i) continue;
      ++rows;
      EXPECT_EQ(c.at("blocking_source").s, held.at("source").s);
      EXPECT_EQ(c.at("count_star").i, 1);
      // The statistic converts end - start, the event end and start apart: the
      // two roundings may differ by 1 ps.
      EXPECT_LE(std::abs(c.at("max_timer_wait").i - e.at("timer_wait").i), 1);
    }
    EXPECT_EQ(rows, 1);
  }
  EXPECT_EQ(contended, 1);
  // The condition wait that the signaller thread ended, and the one that timed out.
  int signalled = 0, timed_out = 0;
  for (const auto& e : waits) {
    if (e.at("event_name").s != "wait/synch/cond/pl_calls/main") continue;
    EXPECT_TRUE(e.at("blocking_thread_id").null);
    if (e.at("operation").s == "wait") {
      ++signalled;
      ASSERT_FALSE(e.at("signalling_thread_id").null);
      EXPECT_NE(e.at("signalling_thread_id").i, e.at("thread_id").i);
    } else {
      ++timed_out;
      EXPECT_TRUE(e.at("signalling_thread_id").null);
    }
  }
  EXPECT_EQ(signalled, 1);
  EXPECT_EQ(timed_out, 1);
}

TEST_F(Preload, InstrumentsOffOrNoRegionChangeNothing) {
  // No rule: every instrument off (the classes exist, nothing is counted).
  run_result off = run({program("pl_calls"), dir_}, env(""));
  ASSERT_EQ(off.status, 0) << off.out;
  {
    tables t(region_);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t.count_star("wait/synch/mutex/pl_calls/pl_init_work_mutex"), 0);
  }
  // No PFS_REGION: a pure pass-through.
  run_result none = run({program("pl_calls"), dir_}, {"LD_PRELOAD=" + ld_preload(), "PFS_REGION="});
  ASSERT_EQ(none.status, 0) << none.out;
  EXPECT_EQ(value(none, "failures"), 0);
  // A region that cannot be created: the agent stays off, the program runs.
  run_result bad =
      run({program("pl_calls"), dir_}, {"LD_PRELOAD=" + ld_preload(), "PFS_REGION=/nonexistent/dir/x.pfs"});
  ASSERT_EQ(bad.status, 0) << bad.out;
}

TEST_F(Preload, StaticInitializersAndLoadTimeConstructors) {
  run_result r = run({program("pl_static_init")}, env());
  ASSERT_EQ(r.status, 0) << r.out;
  tables t(region_);
  ASSERT_TRUE(t.ok());
  // std::mutex never calls pthread_mutex_init: registered on first use, class per module.
  EXPECT_GE(t.count_star("wait/synch/mutex/pl_static_init/static"), value(r, "std_mutex_locks"));
  // The library constructor may run before the interposer starts; its later locks count.
  EXPECT_GE(t.count_star("wait/synch/mutex/libpl_early/static"), 50);
  EXPECT_TRUE(t.lost().empty()) << ::testing::PrintToString(t.lost());
}

TEST_F(Preload, ForkedAndExecdChildrenDoNotWriteTheParentsRegion) {
  run_result r = run({program("pl_fork_exec")}, env());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(value(r, "children_ok"), 1);
  tables t(region_);
  ASSERT_TRUE(t.ok());
  // Only the parent's locks: each child locked 5000 times more.
  EXPECT_EQ(t.count_star("wait/synch/mutex/pl_fork_exec/pl_fork_init"), value(r, "parent_locks"));
  EXPECT_EQ(t.status("exited"), 1);
}

// A pre-forking program (issue 14): with %p in PFS_REGION each worker records
// into a region of its own, which holds what the worker did and nothing of the
// parent's; the parent's region holds only the parent's. Verbose, each child says
// where it records.
TEST_F(Preload, PreForkedWorkersRecordIntoRegionsOfTheirOwn) {
  const std::string work = dir_ + "/prefork";
  mkdir(work.c_str(), 0700);
  std::vector<std::string> e = env();
  e[1] = "PFS_REGION=" + work + "/app.%p.pfs";
  e.push_back("PFS_PRELOAD_VERBOSE=1");
  e.push_back("WORKERS=3");
  // The CYCLE watch on, as on a kvm-clock guest: its thread is the agent's, not a
  // program thread (the thread checks below), and each child starts its own.
  e.push_back("PFS_TIMER_WATCH=on");
  e.push_back("PFS_TIMER_WATCH_INTERVAL_MS=10");
  const std::string err = work + "/stderr";
  run_result r = run({program("pl_prefork"), work}, e, 120, {}, err);
  ASSERT_EQ(r.status, 0) << r.out;
  ASSERT_EQ(value(r, "workers_ok"), 1);
  std::ifstream in(err);
  const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::set<long> workers;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("worker=", 0) == 0) workers.insert(std::atol(line.c_str() + 7));
  ASSERT_EQ(workers.size(), 3u) << r.out;
  const std::string cls = "wait/synch/mutex/pl_prefork/pl_prefork_init";
  int regions = 0;
  for (const auto& f : std::filesystem::directory_iterator(work)) {
    const std::string path = f.path().string();
    if (f.path().extension() != ".pfs") continue;
    ++regions;
    tables t(path);
    ASSERT_TRUE(t.ok()) << path;
    const long pid = static_cast<long>(t.status("pid"));
    EXPECT_EQ(path, work + "/app." + std::to_string(pid) + ".pfs");
    EXPECT_EQ(t.status("provider_alive"), 0) << path;
    // The worker's own files: not the stdout and stderr it inherited (bound at start).
    std::int64_t written = 0;
    const std::string own = std::filesystem::canonical(work).string() + "/";
    for (auto& f_row : t.rows("file_summary_by_instance"))
      if (f_row["file_name"].s.rfind(own, 0) == 0 && f_row["file_name"].s != own + "stderr")
        written += f_row["sum_number_of_bytes_write"].i;
    if (workers.count(pid) == 0) {  // the parent (the workers end with _exit: no exited flag)
      EXPECT_EQ(t.status("exited"), 1) << path;
      EXPECT_EQ(t.count_star(cls), value(r, "parent_locks")) << path;
      continue;
    }
    EXPECT_NE(said.find("pfs_preload: forked child records into " + path), std::string::npos) << said;
    EXPECT_EQ(t.count_star(cls), value(r, "worker_locks")) << path;
    EXPECT_EQ(written, value(r, "worker_bytes")) << path;
    // Only the forking thread came along: the parent's second thread is not there.
    EXPECT_EQ(t.rows("threads").size(), 1u) << path;
    EXPECT_TRUE(t.lost().empty()) << path;
  }
  EXPECT_EQ(regions, 4);
}

// Without %p a forked child records nothing, and says why when verbose.
TEST_F(Preload, ForkedChildWithoutPatternSaysWhyItRecordsNothing) {
  const std::string work = dir_ + "/prefork_nopattern";
  mkdir(work.c_str(), 0700);
  std::vector<std::string> e = env();
  e.push_back("PFS_PRELOAD_VERBOSE=1");
  e.push_back("WORKERS=2");
  const std::string err = work + "/stderr";
  run_result r = run({program("pl_prefork"), work}, e, 120, {}, err);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream in(err);
  const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(said.find("forked child records nothing: PFS_REGION has no %p"), std::string::npos) << said;
  tables t(region_);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.count_star("wait/synch/mutex/pl_prefork/pl_prefork_init"), value(r, "parent_locks"));
}

TEST_F(Preload, ThreadExitingWhileHoldingALockAndExitWithThreadsRunning) {
  run_result r = run({program("pl_exit_holding")}, env(), 60);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(value(r, "held_ok"), 1);
  tables t(region_);
  ASSERT_TRUE(t.ok());
  int held = 0, free = 0;
  for (auto& m : t.rows("mutex_instances")) {
    if (m["name"].s != "wait/synch/mutex/pl_exit_holding/pl_holder_init") continue;
    (m["locked_by_thread_id"].null ? free : held) += 1;
  }
  EXPECT_EQ(held, 1);  // the plain mutex: still locked by the thread that exited
  EXPECT_EQ(free, 1);  // the robust one was recovered and unlocked
}

// From the program's call to exit() the interposer stops booking what its exit
// handlers destroy and free (the main thread has left its row by then): the region
// keeps the instances and the memory of the moment the program chose to exit. A
// return from main calls exit inside the C library, unseen: booked as before.
TEST_F(Preload, WhatExitHandlersDestroyAfterExitStaysInTheRegion) {
  const auto made = [&](const std::string& how, std::int64_t* instances, std::int64_t* bytes) {
    unlink(region_.c_str());
    run_result r = run({program("pl_exit_handlers"), how}, env(), 60);
    ASSERT_EQ(r.status, 0) << r.out;
    ASSERT_EQ(value(r, "objects"), 40);
    tables t(region_);
    ASSERT_TRUE(t.ok());
    *instances = 0;
    for (auto& m : t.rows("mutex_instances"))
      if (m["name"].s == "wait/synch/mutex/pl_exit_handlers/pl_exit_make") ++*instances;
    EXPECT_EQ(t.count_star("wait/synch/mutex/pl_exit_handlers/pl_exit_make"), 40) << how;
    if (kSanitized) return;  // a sanitizer runtime, first in LD_PRELOAD, keeps malloc to itself
    auto heap =
        t.row_where("memory_summary_global_by_event_name", "event_name", "memory/pl_exit_handlers/malloc");
    ASSERT_FALSE(heap.empty()) << how;
    *bytes = heap["current_number_of_bytes_used"].i;
  };
  std::int64_t instances = 0, bytes = 0;
  made("exit", &instances, &bytes);
  EXPECT_EQ(instances, 40);
  if (!kSanitized) {
    EXPECT_GE(bytes, 40 * 1000);  // the blocks (usable sizes), still in use
  }
  made("return", &instances, &bytes);
  EXPECT_EQ(instances, 0);
  if (!kSanitized) {
    EXPECT_LT(bytes, 40 * 1000);
  }
}

// A program that marks statements through the C ABI shares the interposer's agent:
// its interposed mutex and file waits nest in its stages, which nest in its statements.
TEST_F(Preload, StatementsOfTheProgramContainItsInterposedWaits) {
  std::vector<std::string> e = env();
  e.push_back("PL_WORK_DIR=" + dir_);
  e.push_back("PFS_WAITS_HISTORY_LONG_SIZE=20000");
  e.push_back("PFS_STAGES_HISTORY_LONG_SIZE=2000");
  e.push_back("PFS_STATEMENTS_HISTORY_LONG_SIZE=1000");
  e.push_back(
      "PFS_CONSUMERS=events_stages_current=ON,events_stages_history=ON,events_stages_history_long=ON,"
      "events_statements_history_long=ON");
  run_result r = run({program("pl_work")}, e, 60);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(value(r, "interposed"), 1);
  tables t(region_);
  ASSERT_TRUE(t.ok());
  auto g =
      t.row_where("events_statements_summary_global_by_event_name", "event_name", "statement/pl/request");
  ASSERT_FALSE(g.empty());
  EXPECT_EQ(g["count_star"].i, 400);
  std::set<std::pair<std::int64_t, std::int64_t>> statements;
  for (auto& s : t.rows("events_statements_history_long"))
    statements.insert({s["thread_id"].i, s["event_id"].i});
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> stages;
  for (auto& s : t.rows("events_stages_history_long")) {
    EXPECT_EQ(s["nesting_event_type"].s, "STATEMENT");
    EXPECT_TRUE(statements.count({s["thread_id"].i, s["nesting_event_id"].i})) << s["event_name"].s;
    stages[{s["thread_id"].i, s["event_id"].i}] = s["event_name"].s;
  }
  EXPECT_EQ(stages.size(), 800u);
  int mutex_waits = 0, writes = 0;
  for (auto& w : t.rows("events_waits_history_long")) {
    const std::string& name = w["event_name"].s;
    const bool is_mutex = name.find("wait/synch/mutex/pl_work/") == 0;
    const bool is_write = name == "wait/io/file/pl_work/file" && w["operation"].s == "write";
    if (!is_mutex && !is_write) continue;
    ASSERT_FALSE(w["nesting_event_type"].null) << name;
    EXPECT_EQ(w["nesting_event_type"].s, "STAGE") << name;
    auto it = stages.find({w["thread_id"].i, w["nesting_event_id"].i});
    ASSERT_NE(it, stages.end()) << name;
    EXPECT_EQ(it->second, is_mutex ? "stage/pl/locking" : "stage/pl/writing") << name;
    (is_mutex ? mutex_waits : writes) += 1;
  }
  EXPECT_EQ(mutex_waits, 400);
  EXPECT_EQ(writes, 400);
}

// pthread_create under the interposer: the creating thread is the new thread's
// PARENT_THREAD_ID (main -> child -> grandchild). Under a sanitizer its runtime's
// pthread_create comes first in LD_PRELOAD and the interposer never sees the call.
TEST_F(Preload, ThreadsRecordTheThreadThatCreatedThem) {
  if (kSanitized) GTEST_SKIP() << "the sanitizer's pthread_create precedes the interposer's";
  run_result r = run({program("pl_spawn")}, env(), 60);
  ASSERT_EQ(r.status, 0) << r.out;
  tables t(region_);
  ASSERT_TRUE(t.ok());
  std::map<std::int64_t, std::int64_t> id_of_os, parent_of;  // THREAD_OS_ID -> THREAD_ID; THREAD_ID -> parent
  for (auto& th : t.rows("threads")) {
    id_of_os[th["thread_os_id"].i] = th["thread_id"].i;
    parent_of[th["thread_id"].i] = th["parent_thread_id"].null ? -1 : th["parent_thread_id"].i;
  }
  const std::int64_t main_id = id_of_os[value(r, "main_tid")];
  const std::int64_t child_id = id_of_os[value(r, "child_tid")];
  const std::int64_t grandchild_id = id_of_os[value(r, "grandchild_tid")];
  ASSERT_NE(main_id, 0);
  ASSERT_NE(child_id, 0);
  ASSERT_NE(grandchild_id, 0);
  EXPECT_EQ(parent_of[main_id], -1);
  EXPECT_EQ(parent_of[child_id], main_id);
  EXPECT_EQ(parent_of[grandchild_id], child_id);
}

TEST_F(Preload, ManyShortLivedThreads) {
  run_result r = run({program("pl_many_threads"), dir_, "2000", "16"}, env(), 120);
  ASSERT_EQ(r.status, 0) << r.out;
  tables t(region_);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.count_star("wait/synch/mutex/pl_many_threads/pl_many_init"), value(r, "locks"));
  auto file = t.row_where("file_summary_by_event_name", "event_name", "wait/io/file/pl_many_threads/file");
  EXPECT_EQ(file["count_write"].i, value(r, "threads"));
  EXPECT_EQ(file["sum_number_of_bytes_write"].i, value(r, "bytes"));
  // Thread slots are given back at exit: 2001 threads, 17 at a time, no slot lost.
  EXPECT_GE(t.status("next_thread_id"), 2001);
  EXPECT_TRUE(t.lost().empty()) << ::testing::PrintToString(t.lost());
}

TEST_F(Preload, PidInRegionPath) {
  // %p in PFS_REGION: one region per process (a program and what it execs).
  const std::string pattern = dir_ + "/pid_%p.pfs";
  std::vector<std::string> e = env();
  e[1] = "PFS_REGION=" + pattern;
  run_result r = run({program("pl_many_threads"), dir_, "4", "2"}, e);
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(std::system(("ls " + dir_ + "/pid_[0-9]*.pfs >/dev/null 2>&1").c_str()), 0);
  EXPECT_EQ(std::system(("rm -f " + dir_ + "/pid_[0-9]*.pfs").c_str()), 0);
}

// ---------------------------------------------------------------------------
// sysbench (Debian package): its own report against the tables.

class Sysbench : public Preload {
 protected:
  void SetUp() override {
    if (kSanitized) GTEST_SKIP() << "sysbench is not built with the sanitizer; normal build only";
    struct stat st {};
    if (stat("/usr/bin/sysbench", &st) != 0) {
      if (std::getenv("PFS_PRELOAD_REQUIRE_SYSBENCH") != nullptr) FAIL() << "sysbench is not installed";
      GTEST_SKIP() << "sysbench is not installed (apt-get install sysbench)";
    }
    Preload::SetUp();
  }
  // "name: value" lines of sysbench's report.
  static double report(const run_result& r, const std::string& name) {
    const std::size_t at = r.out.find(name + ":");
    if (at == std::string::npos) return -1;
    return std::strtod(r.out.c_str() + at + name.size() + 1, nullptr);
  }
};

TEST_F(Sysbench, MutexLocksAreAllCounted) {
  run_result r = run({"/usr/bin/sysbench", "mutex", "--threads=2", "--mutex-num=64", "--mutex-locks=50000",
                      "--mutex-loops=100", "run"},
                     env());
  ASSERT_EQ(r.status, 0) << r.out;
  tables t(region_);
  ASSERT_TRUE(t.ok());
  // Each thread does mutex-locks lock/unlock pairs over the mutex array
  // (initialized in one function: one class).
  std::int64_t most = 0;
  for (auto& c : t.rows("events_waits_summary_global_by_event_name"))
    if (c["event_name"].s.rfind("wait/synch/mutex/sysbench/", 0) == 0)
      most = std::max(most, c["count_star"].i);
  EXPECT_EQ(most, 2 * 50000);
  EXPECT_EQ(report(r, "total number of events"), 2);
  EXPECT_TRUE(t.lost().empty()) << ::testing::PrintToString(t.lost());
}

TEST_F(Sysbench, ThreadsLocksMatchEventsTimesYields) {
  run_result r = run({"/usr/bin/sysbench", "threads", "--threads=2", "--thread-yields=100",
                      "--thread-locks=1", "--events=2000", "--time=0", "run"},
                     env());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(report(r, "total number of events"), 2000);
  tables t(region_);
  ASSERT_TRUE(t.ok());
  std::int64_t most = 0, waited = 0;
  for (auto& c : t.rows("events_waits_summary_global_by_event_name"))
    if (c["event_name"].s.rfind("wait/synch/mutex/sysbench/", 0) == 0 && c["count_star"].i > most) {
      most = c["count_star"].i;
      waited = c["sum_timer_wait"].i;
    }
  EXPECT_EQ(most, 2000 * 100);  // events x thread-yields lock/yield/unlock rounds
  EXPECT_GT(waited, 0);         // two threads on one mutex, yielding while they hold it: waits
  // Thread summary: the two worker threads did them all.
  std::int64_t by_threads = 0;
  for (auto& c : t.rows("events_waits_summary_by_thread_by_event_name"))
    if (c["event_name"].s.rfind("wait/synch/mutex/sysbench/", 0) == 0) by_threads += c["count_star"].i;
  EXPECT_GE(by_threads, 0);  // threads that exited took their rows with them
}

TEST_F(Sysbench, FileioCountsAndBytesMatchItsReport) {
  const std::string work = dir_ + "/fileio";
  mkdir(work.c_str(), 0700);
  const std::vector<std::string> common = {"/usr/bin/sysbench", "fileio", "--file-num=4",
                                           "--file-total-size=32M", "--file-block-size=16384"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = common;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  ASSERT_EQ(run(with({"prepare"}), {}, 120, work).status, 0);
  run_result r = run(with({"--file-test-mode=rndrw", "--events=20000", "--time=0", "--threads=2", "run"}),
                     env(), 120, work);
  run(with({"cleanup"}), {}, 60, work);
  ASSERT_EQ(r.status, 0) << r.out;
  tables t(region_);
  ASSERT_TRUE(t.ok());
  auto f = t.row_where("file_summary_by_event_name", "event_name", "wait/io/file/sysbench/file");
  ASSERT_FALSE(f.empty());
  const double reads = static_cast<double>(f["count_read"].i),
               writes = static_cast<double>(f["count_write"].i);
  // Every request read or wrote one block.
  EXPECT_EQ(f["sum_number_of_bytes_read"].i, f["count_read"].i * 16384);
  EXPECT_EQ(f["sum_number_of_bytes_write"].i, f["count_write"].i * 16384);
  // sysbench's rates are per second over one run: their ratios are the counts' ratios.
  const double rps = report(r, "reads/s"), wps = report(r, "writes/s"), fps = report(r, "fsyncs/s");
  ASSERT_GT(rps, 0);
  ASSERT_GT(wps, 0);
  EXPECT_NEAR(reads / writes, rps / wps, 0.01 * rps / wps);
  // And the rates times the run time give the counts (the printed time is rounded).
  const double seconds = report(r, "total time");
  EXPECT_NEAR(reads, rps * seconds, 0.1 * reads + 50);
  EXPECT_NEAR(writes, wps * seconds, 0.1 * writes + 50);
  // Syncs are misc operations (as are open and close): at least the reported fsyncs.
  EXPECT_GE(static_cast<double>(f["count_misc"].i), 0.9 * fps * seconds);
  // Per file: the four test files, each with its own io, named absolutely (sysbench
  // opens them relative to its working directory).
  const std::string prefix = std::filesystem::canonical(work).string() + "/test_file.";
  int files = 0;
  for (auto& i : t.rows("file_summary_by_instance"))
    if (i["file_name"].s.rfind(prefix, 0) == 0 && i["count_read"].i > 0 && i["count_write"].i > 0) ++files;
  EXPECT_EQ(files, 4);
}

}  // namespace

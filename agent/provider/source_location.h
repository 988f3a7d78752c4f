// pfs::source_location, what the C++ API's wrappers take as their call site
// (SOURCE = file:line): std::source_location where the standard library has it,
// else the same interface over __builtin_FILE and __builtin_LINE. Debian 12's
// clang 14 with libstdc++ 12 has no std::source_location (it needs
// __builtin_source_location), and the API must build there too.
#pragma once

#if __has_include(<source_location>)
#include <source_location>
#endif

namespace pfs {

#if defined(__cpp_lib_source_location)
using source_location = std::source_location;
#else
class source_location {
 public:
  // The default arguments are evaluated where current() is called, which, as a
  // default argument itself, is the caller of the wrapper.
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           unsigned line = __builtin_LINE()) noexcept {
    source_location at;
    at.file_ = file;
    at.line_ = line;
    return at;
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr unsigned line() const noexcept { return line_; }
  constexpr unsigned column() const noexcept { return 0; }
  constexpr const char* function_name() const noexcept { return ""; }

 private:
  const char* file_ = "";
  unsigned line_ = 0;
};
#endif

}  // namespace pfs

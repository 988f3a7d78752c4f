// What a test needs to run a program under the interposer from a sanitizer build:
// the sanitizer's runtime must come first in LD_PRELOAD (test_preload,
// test_startup_errors).
#pragma once

#include <link.h>

#include <cstring>
#include <string>

namespace pfs_test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr const char kSanitizerRuntime[] = "libasan.so";
#elif defined(__SANITIZE_THREAD__)
inline constexpr const char kSanitizerRuntime[] = "libtsan.so";
#else
inline constexpr const char kSanitizerRuntime[] = "";
#endif
inline constexpr bool kSanitized = sizeof(kSanitizerRuntime) > 1;

// The sanitizer runtime this process runs with (it must precede the interposer).
inline std::string sanitizer_runtime() {
  if (!kSanitized) return {};
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && std::strstr(info->dlpi_name, kSanitizerRuntime) != nullptr)
          *static_cast<std::string*>(data) = info->dlpi_name;
        return 0;
      },
      &found);
  return found;
}

// LD_PRELOAD for library: the sanitizer runtime first, when there is one.
inline std::string with_sanitizer_runtime(const std::string& library) {
  const std::string rt = sanitizer_runtime();
  return rt.empty() ? library : rt + ":" + library;
}

}  // namespace pfs_test

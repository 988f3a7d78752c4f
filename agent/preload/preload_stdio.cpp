// stdio streams under the interposer: fopen, fdopen, freopen, fclose, fread,
// fwrite, fgets, fputs, getline, getdelim, fflush, fseek, fseeko, ftell, ftello
// (the 64 names, the _unlocked forms and the _FORTIFY_SOURCE __*_chk forms too),
// recorded as MySQL records my_fopen, my_fread, my_fwrite ... (mysql_file_fopen and
// friends): file io waits on the stream's file, OPERATION open/create, read, write,
// flush, seek, tell, close, NUMBER_OF_BYTES what the call gave or took from the
// program. A stream reaches the kernel through the C library's internal entry
// points, which no interposer sees, so these are its only io waits; a stream's
// buffering means one fread may be no system call, or one read for many freads.
//
// - The stream's file is its descriptor's (fileno), bound at fopen as open binds
//   it; fdopen keeps what its descriptor was (a file opened through open is still
//   that file). stdin, stdout and stderr were opened before the agent: they are
//   recorded only when the program reopens them (freopen) onto a named file.
// - Character calls (fgetc, fputc, getc, putc, getchar, putchar and their
//   _unlocked forms) are not interposed: a few nanoseconds each, a wait would
//   multiply their cost (docs/performance.md measures it).
// - fopen and the others are called with the caller's arguments and their result
//   and errno returned untouched; a stream without a descriptor (fmemopen,
//   open_memstream, fopencookie) is not recorded.
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include <cstring>

#include "agent/preload/preload_io.h"

// The C library's own entry points for the same functions (no dlsym needed): used
// until the real functions are resolved, and for calls made while they are.
extern "C" {
FILE* _IO_fopen(const char*, const char*);
FILE* _IO_fdopen(int, const char*);
int _IO_fclose(FILE*);
size_t _IO_fread(void*, size_t, size_t, FILE*);
size_t _IO_fwrite(const void*, size_t, size_t, FILE*);
char* _IO_fgets(char*, int, FILE*);
int _IO_fputs(const char*, FILE*);
int _IO_fflush(FILE*);
long _IO_ftell(FILE*);
}

namespace pfs::preload {
namespace {

using fread_fn = size_t (*)(void*, size_t, size_t, FILE*);
using fwrite_fn = size_t (*)(const void*, size_t, size_t, FILE*);
using fgets_fn = char* (*)(char*, int, FILE*);
using fputs_fn = int (*)(const char*, FILE*);
using fflush_fn = int (*)(FILE*);
using fopen_fn = FILE* (*)(const char*, const char*);
using freopen_fn = FILE* (*)(const char*, const char*, FILE*);
using fseeko_fn = int (*)(FILE*, off_t, int);
using ftello_fn = off_t (*)(FILE*);
using fread_chk_fn = size_t (*)(void*, size_t, size_t, size_t, FILE*);
using fgets_chk_fn = char* (*)(char*, size_t, int, FILE*);

// The unlocked forms fall back to the locked ones, which differ only in taking
// the stream's lock; ftello to ftell (off_t is long on this ABI).
struct real_stdio_functions {
  fopen_fn fopen = _IO_fopen;
  fopen_fn fopen64 = _IO_fopen;
  FILE* (*fdopen)(int, const char*) = _IO_fdopen;
  freopen_fn freopen = nullptr;
  freopen_fn freopen64 = nullptr;
  int (*fclose)(FILE*) = _IO_fclose;
  fread_fn fread = _IO_fread;
  fread_fn fread_unlocked = _IO_fread;
  fwrite_fn fwrite = _IO_fwrite;
  fwrite_fn fwrite_unlocked = _IO_fwrite;
  fgets_fn fgets = _IO_fgets;
  fgets_fn fgets_unlocked = _IO_fgets;
  fputs_fn fputs = _IO_fputs;
  fputs_fn fputs_unlocked = _IO_fputs;
  ssize_t (*getdelim)(char**, size_t*, int, FILE*) = nullptr;  // __getdelim is interposed too
  fflush_fn fflush = _IO_fflush;
  fflush_fn fflush_unlocked = _IO_fflush;
  int (*fseek)(FILE*, long, int) = nullptr;
  fseeko_fn fseeko = nullptr;
  fseeko_fn fseeko64 = nullptr;
  long (*ftell)(FILE*) = _IO_ftell;
  ftello_fn ftello = _IO_ftell;
  ftello_fn ftello64 = _IO_ftell;
  fread_chk_fn fread_chk = nullptr;
  fread_chk_fn fread_unlocked_chk = nullptr;
  fgets_chk_fn fgets_chk = nullptr;
  fgets_chk_fn fgets_unlocked_chk = nullptr;
};
real_stdio_functions real_stdio;

template <class Fn>
void resolve(Fn& slot, const char* name) {
  if (void* p = dlsym(RTLD_NEXT, name)) slot = reinterpret_cast<Fn>(p);
}

// The descriptor of a stream (the public struct's field: no call, errno kept);
// -1 for a stream without one and for fflush(NULL).
inline int fd_of(FILE* f) { return f != nullptr ? f->_fileno : -1; }

// fopen's mode: "w" and "a" create the file (MySQL's my_fopen: O_CREAT).
inline int open_op(const char* mode) {
  return mode != nullptr && (mode[0] == 'w' || mode[0] == 'a') ? PFS_FILE_CREATE : PFS_FILE_OPEN;
}

template <class Call, class Bytes>
[[gnu::always_inline]] inline auto stream_io(FILE* f, int op, const void* caller, Call call, Bytes bytes)
    -> decltype(call()) {
  return file_io(fd_of(f), op, caller, call, bytes);
}

// Items of size bytes each.
inline auto items_of(size_t size) {
  return [size](size_t items) { return static_cast<std::int64_t>(items * size); };
}
inline std::int64_t line_bytes(const char* line) {
  return line != nullptr ? static_cast<std::int64_t>(std::strlen(line)) : -1;
}

FILE* fopen_common(fopen_fn fn, const char* path, const char* mode, const void* caller) {
  return open_named(
      AT_FDCWD, path, open_op(mode), caller, [=] { return fn(path, mode); }, fd_of);
}

int fclose_common(FILE* f, const void* caller) {
  const int fd = fd_of(f);
  if (!should_record() || fd < 0) return real_stdio.fclose(f);
  if (file_of_fd(fd) != nullptr) return close_bound(fd, caller, [=] { return real_stdio.fclose(f); });
  const int rc = real_stdio.fclose(f);
  const int saved = errno;
  socket_fd_reset(fd);  // an fdopen'ed socket: its row goes with its descriptor
  errno = saved;
  return rc;
}

// freopen closes the stream's descriptor, then opens path on the stream (NULL:
// the same file again, on the same descriptor, which keeps its binding).
FILE* freopen_common(freopen_fn fn, const char* path, const char* mode, FILE* f, const void* caller) {
  if (fn == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  const int old = fd_of(f);
  if (!should_record() || path == nullptr) return fn(path, mode, f);
  if (file_of_fd(old) != nullptr) close_bound(old, caller, [] { return 0; });
  return open_named(
      AT_FDCWD, path, open_op(mode), caller, [=] { return fn(path, mode, f); }, fd_of);
}

int fseek_common(fseeko_fn fn, FILE* f, off_t off, int whence, const void* caller) {
  if (fn == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return stream_io(
      f, PFS_FILE_SEEK, caller, [=] { return fn(f, off, whence); }, no_bytes{});
}

ssize_t getdelim_common(char** line, size_t* n, int delim, FILE* f, const void* caller) {
  if (real_stdio.getdelim == nullptr) resolve_real_functions();
  auto fn = real_stdio.getdelim;
  if (fn == nullptr) {  // only while dlsym itself runs on this thread
    errno = ENOSYS;
    return -1;
  }
  return stream_io(
      f, PFS_FILE_READ, caller, [=] { return fn(line, n, delim, f); }, byte_count{});
}

}  // namespace

void resolve_stdio_functions() {
  real_stdio_functions r = real_stdio;
  resolve(r.fopen, "fopen");
  resolve(r.fopen64, "fopen64");
  resolve(r.fdopen, "fdopen");
  resolve(r.freopen, "freopen");
  resolve(r.freopen64, "freopen64");
  resolve(r.fclose, "fclose");
  resolve(r.fread, "fread");
  resolve(r.fread_unlocked, "fread_unlocked");
  resolve(r.fwrite, "fwrite");
  resolve(r.fwrite_unlocked, "fwrite_unlocked");
  resolve(r.fgets, "fgets");
  resolve(r.fgets_unlocked, "fgets_unlocked");
  resolve(r.fputs, "fputs");
  resolve(r.fputs_unlocked, "fputs_unlocked");
  resolve(r.getdelim, "getdelim");
  resolve(r.fflush, "fflush");
  resolve(r.fflush_unlocked, "fflush_unlocked");
  resolve(r.fseek, "fseek");
  resolve(r.fseeko, "fseeko");
  resolve(r.fseeko64, "fseeko64");
  resolve(r.ftell, "ftell");
  resolve(r.ftello, "ftello");
  resolve(r.ftello64, "ftello64");
  resolve(r.fread_chk, "__fread_chk");
  resolve(r.fread_unlocked_chk, "__fread_unlocked_chk");
  resolve(r.fgets_chk, "__fgets_chk");
  resolve(r.fgets_unlocked_chk, "__fgets_unlocked_chk");
  real_stdio = r;  // each pointer one aligned word, as preload.cpp's table
}

}  // namespace pfs::preload

// ---------------------------------------------------------------------------
// The interposed functions.

using namespace pfs::preload;

PFS_EXPORT FILE* fopen(const char* path, const char* mode) {
  return fopen_common(real_stdio.fopen, path, mode, CALLER);
}
PFS_EXPORT FILE* fopen64(const char* path, const char* mode) {
  return fopen_common(real_stdio.fopen64, path, mode, CALLER);
}
// The descriptor keeps what it was: nothing to record.
PFS_EXPORT FILE* fdopen(int fd, const char* mode) noexcept { return real_stdio.fdopen(fd, mode); }
PFS_EXPORT FILE* freopen(const char* path, const char* mode, FILE* f) {
  if (real_stdio.freopen == nullptr) resolve_real_functions();
  return freopen_common(real_stdio.freopen, path, mode, f, CALLER);
}
PFS_EXPORT FILE* freopen64(const char* path, const char* mode, FILE* f) {
  if (real_stdio.freopen64 == nullptr) resolve_real_functions();
  return freopen_common(real_stdio.freopen64, path, mode, f, CALLER);
}
PFS_EXPORT int fclose(FILE* f) { return fclose_common(f, CALLER); }

PFS_EXPORT size_t fread(void* p, size_t size, size_t n, FILE* f) {
  return stream_io(
      f, PFS_FILE_READ, CALLER, [=] { return real_stdio.fread(p, size, n, f); }, items_of(size));
}
PFS_EXPORT size_t fread_unlocked(void* p, size_t size, size_t n, FILE* f) {
  return stream_io(
      f, PFS_FILE_READ, CALLER, [=] { return real_stdio.fread_unlocked(p, size, n, f); }, items_of(size));
}
PFS_EXPORT size_t __fread_chk(void* p, size_t room, size_t size, size_t n, FILE* f) {
  if (real_stdio.fread_chk == nullptr) resolve_real_functions();
  if (auto fn = real_stdio.fread_chk)
    return stream_io(
        f, PFS_FILE_READ, CALLER, [=] { return fn(p, room, size, n, f); }, items_of(size));
  if (size != 0 && n > room / size) __builtin_trap();  // as the C library's buffer overflow check
  return real_stdio.fread(p, size, n, f);
}
PFS_EXPORT size_t __fread_unlocked_chk(void* p, size_t room, size_t size, size_t n, FILE* f) {
  if (real_stdio.fread_unlocked_chk == nullptr) resolve_real_functions();
  if (auto fn = real_stdio.fread_unlocked_chk)
    return stream_io(
        f, PFS_FILE_READ, CALLER, [=] { return fn(p, room, size, n, f); }, items_of(size));
  if (size != 0 && n > room / size) __builtin_trap();
  return real_stdio.fread_unlocked(p, size, n, f);
}
PFS_EXPORT size_t fwrite(const void* p, size_t size, size_t n, FILE* f) {
  return stream_io(
      f, PFS_FILE_WRITE, CALLER, [=] { return real_stdio.fwrite(p, size, n, f); }, items_of(size));
}
PFS_EXPORT size_t fwrite_unlocked(const void* p, size_t size, size_t n, FILE* f) {
  return stream_io(
      f, PFS_FILE_WRITE, CALLER, [=] { return real_stdio.fwrite_unlocked(p, size, n, f); }, items_of(size));
}

PFS_EXPORT char* fgets(char* s, int n, FILE* f) {
  return stream_io(
      f, PFS_FILE_READ, CALLER, [=] { return real_stdio.fgets(s, n, f); }, line_bytes);
}
PFS_EXPORT char* fgets_unlocked(char* s, int n, FILE* f) {
  return stream_io(
      f, PFS_FILE_READ, CALLER, [=] { return real_stdio.fgets_unlocked(s, n, f); }, line_bytes);
}
PFS_EXPORT char* __fgets_chk(char* s, size_t room, int n, FILE* f) {
  if (real_stdio.fgets_chk == nullptr) resolve_real_functions();
  if (auto fn = real_stdio.fgets_chk)
    return stream_io(
        f, PFS_FILE_READ, CALLER, [=] { return fn(s, room, n, f); }, line_bytes);
  if (n > 0 && static_cast<size_t>(n) > room) __builtin_trap();
  return real_stdio.fgets(s, n, f);
}
PFS_EXPORT char* __fgets_unlocked_chk(char* s, size_t room, int n, FILE* f) {
  if (real_stdio.fgets_unlocked_chk == nullptr) resolve_real_functions();
  if (auto fn = real_stdio.fgets_unlocked_chk)
    return stream_io(
        f, PFS_FILE_READ, CALLER, [=] { return fn(s, room, n, f); }, line_bytes);
  if (n > 0 && static_cast<size_t>(n) > room) __builtin_trap();
  return real_stdio.fgets_unlocked(s, n, f);
}
PFS_EXPORT int fputs(const char* s, FILE* f) {
  return stream_io(
      f, PFS_FILE_WRITE, CALLER, [=] { return real_stdio.fputs(s, f); },
      [s](int rc) { return rc >= 0 ? static_cast<std::int64_t>(std::strlen(s)) : -1; });
}
PFS_EXPORT int fputs_unlocked(const char* s, FILE* f) {
  return stream_io(
      f, PFS_FILE_WRITE, CALLER, [=] { return real_stdio.fputs_unlocked(s, f); },
      [s](int rc) { return rc >= 0 ? static_cast<std::int64_t>(std::strlen(s)) : -1; });
}
// glibc's headers inline getline as __getdelim(..., '\n', ...) in optimized builds.
// No link-time fallback (a reference to __getdelim would bind to this one): a call
// before the real functions are resolved resolves them first.
PFS_EXPORT ssize_t getdelim(char** line, size_t* n, int delim, FILE* f) {
  return getdelim_common(line, n, delim, f, CALLER);
}
PFS_EXPORT ssize_t __getdelim(char** line, size_t* n, int delim, FILE* f) {
  return getdelim_common(line, n, delim, f, CALLER);
}
PFS_EXPORT ssize_t getline(char** line, size_t* n, FILE* f) {
  return getdelim_common(line, n, '\n', f, CALLER);
}

PFS_EXPORT int fflush(FILE* f) {
  return stream_io(
      f, PFS_FILE_FLUSH, CALLER, [=] { return real_stdio.fflush(f); }, no_bytes{});
}
PFS_EXPORT int fflush_unlocked(FILE* f) {
  return stream_io(
      f, PFS_FILE_FLUSH, CALLER, [=] { return real_stdio.fflush_unlocked(f); }, no_bytes{});
}

PFS_EXPORT int fseek(FILE* f, long off, int whence) {
  if (real_stdio.fseek == nullptr) resolve_real_functions();
  return fseek_common(real_stdio.fseek, f, off, whence, CALLER);
}
PFS_EXPORT int fseeko(FILE* f, off_t off, int whence) {
  if (real_stdio.fseeko == nullptr) resolve_real_functions();
  return fseek_common(real_stdio.fseeko, f, off, whence, CALLER);
}
PFS_EXPORT int fseeko64(FILE* f, off_t off, int whence) {
  if (real_stdio.fseeko64 == nullptr) resolve_real_functions();
  return fseek_common(real_stdio.fseeko64, f, off, whence, CALLER);
}
// MySQL's my_ftell is a "tell".
PFS_EXPORT long ftell(FILE* f) {
  return stream_io(
      f, PFS_FILE_TELL, CALLER, [=] { return real_stdio.ftell(f); }, no_bytes{});
}
PFS_EXPORT off_t ftello(FILE* f) {
  return stream_io(
      f, PFS_FILE_TELL, CALLER, [=] { return real_stdio.ftello(f); }, no_bytes{});
}
PFS_EXPORT off_t ftello64(FILE* f) {
  return stream_io(
      f, PFS_FILE_TELL, CALLER, [=] { return real_stdio.ftello64(f); }, no_bytes{});
}

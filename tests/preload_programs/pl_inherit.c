/* Descriptors inherited from the parent, of known byte counts: the test runs this
 * with stdin from a file and stdout to a file (as a shell's `< in > out` does), so the
 * program opens neither. Reads all of stdin in 100-byte reads; writes kOut bytes to
 * stdout, then kDup bytes through a copy of stdout made with fcntl(F_DUPFD_CLOEXEC).
 * Prints read=, written=, dup_written=, failures= on stderr. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { kOut = 3000, kDup = 1234 };

int main(void) {
  char buf[4096];
  long got = 0;
  int failures = 0;
  for (;;) {
    const ssize_t n = read(0, buf, 100);
    if (n < 0) ++failures;
    if (n <= 0) break;
    got += n;
  }
  memset(buf, 'o', sizeof buf);
  if (write(1, buf, kOut) != kOut) ++failures;
  const int copy = fcntl(1, F_DUPFD_CLOEXEC, 10);
  if (copy < 10) ++failures;
  if (write(copy, buf, kDup) != kDup) ++failures;
  close(copy);
  fprintf(stderr, "read=%ld\nwritten=%d\ndup_written=%d\nfailures=%d\n", got, kOut, kDup, failures);
  return failures == 0 ? 0 : 1;
}

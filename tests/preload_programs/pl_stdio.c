/* stdio streams, vector io and kernel copies of known sizes, on files named
 * relative to the working directory and to a directory descriptor (the tables must
 * show them under their absolute names). Each call's result is checked against
 * what the C library must return; prints failures=<n> (0: every result right).
 * Usage: pl_stdio <dir>   (works in <dir>; the files stay there) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static int failures = 0;
#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "pl_stdio: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

/* stdio.txt: 306 bytes written (fwrite 300, fputs 6), 612 read (fread 50, fgets
 * 256, getline 306, getline at the end: -1). */
static void streams(void) {
  char block[300];
  memset(block, 'a', sizeof(block));
  FILE* f = fopen("stdio.txt", "w");
  CHECK(f != NULL);
  if (f == NULL) return;
  CHECK(fwrite(block, 100, 3, f) == 3); /* 3 items of 100 bytes */
  CHECK(fputs("hello\n", f) >= 0);
  CHECK(fflush(f) == 0);
  CHECK(fclose(f) == 0);

  char path[4096];
  CHECK(getcwd(path, sizeof(path) - 16) != NULL);
  strcat(path, "/stdio.txt");
  f = fopen64(path, "r");
  CHECK(f != NULL);
  if (f == NULL) return;
  char buf[1024];
  CHECK(fread(buf, 1, 50, f) == 50);
  CHECK(fgets(buf, sizeof(buf), f) == buf && strlen(buf) == 256);
  CHECK(fseek(f, 0, SEEK_SET) == 0);
  CHECK(ftell(f) == 0);
  char* line = NULL;
  size_t room = 0;
  CHECK(getline(&line, &room, f) == 306);
  errno = 0;
  CHECK(getline(&line, &room, f) == -1 && errno == 0); /* the end of the file: no error */
  free(line);
  CHECK(fclose(f) == 0);
  /* A missing file: NULL and ENOENT, as without the interposer. */
  errno = 0;
  CHECK(fopen("missing.txt", "r") == NULL && errno == ENOENT);
}

/* freopen: first.txt created and closed, second.txt created on the same stream, 3
 * bytes written to it. */
static void reopened(void) {
  FILE* f = fopen("first.txt", "w");
  CHECK(f != NULL);
  if (f == NULL) return;
  f = freopen("second.txt", "w", f);
  CHECK(f != NULL);
  if (f == NULL) return;
  CHECK(fputs("xyz", f) >= 0);
  CHECK(fclose(f) == 0);
}

/* unlocked.txt, opened with openat relative to a directory descriptor and made a
 * stream with fdopen: 64 bytes written and 64 read with the _unlocked forms. */
static void unlocked(void) {
  int dir = open(".", O_RDONLY | O_DIRECTORY);
  CHECK(dir >= 0);
  int fd = openat(dir, "./unlocked.txt", O_CREAT | O_RDWR | O_TRUNC, 0600);
  CHECK(fd >= 0);
  close(dir);
  FILE* f = fdopen(fd, "w+");
  CHECK(f != NULL);
  if (f == NULL) return;
  char buf[64];
  memset(buf, 'u', sizeof(buf));
  CHECK(fwrite_unlocked(buf, 1, sizeof(buf), f) == sizeof(buf));
  CHECK(fflush_unlocked(f) == 0);
  CHECK(fseeko(f, 0, SEEK_SET) == 0);
  memset(buf, 0, sizeof(buf));
  CHECK(fread_unlocked(buf, 1, sizeof(buf), f) == sizeof(buf) && buf[63] == 'u');
  CHECK(fclose(f) == 0);
}

/* vector.bin: 400 bytes written (writev 60, pwritev 300, pwritev2 40) and 372 read
 * (preadv 12, preadv2 360); then read whole by copy_file_range into copy.bin and by
 * sendfile into copy2.bin, 100 bytes by splice through a pipe into copy3.bin and
 * 100 by sendfile into a socket. */
static void vectors(void) {
  char a[360];
  memset(a, 'v', sizeof(a));
  int fd = open("vector.bin", O_CREAT | O_RDWR | O_TRUNC, 0600);
  CHECK(fd >= 0);
  struct iovec w3[3] = {{a, 10}, {a, 20}, {a, 30}};
  CHECK(writev(fd, w3, 3) == 60);
  struct iovec w2[2] = {{a, 100}, {a, 200}};
  CHECK(pwritev(fd, w2, 2, 60) == 300);
  struct iovec r2[2] = {{a, 5}, {a + 5, 7}};
  CHECK(preadv(fd, r2, 2, 0) == 12);
  struct iovec r1 = {a, 360};
  CHECK(preadv2(fd, &r1, 1, 0, 0) == 360);
  struct iovec w1 = {a, 40};
  CHECK(pwritev2(fd, &w1, 1, 360, 0) == 40);

  int copy = open("copy.bin", O_CREAT | O_WRONLY | O_TRUNC, 0600);
  loff_t in_off = 0;
  CHECK(copy_file_range(fd, &in_off, copy, NULL, 400, 0) == 400);
  close(copy);
  int copy2 = open("copy2.bin", O_CREAT | O_WRONLY | O_TRUNC, 0600);
  off_t off = 0;
  CHECK(sendfile(copy2, fd, &off, 400) == 400);
  close(copy2);
  int p[2];
  CHECK(pipe(p) == 0);
  int copy3 = open("copy3.bin", O_CREAT | O_WRONLY | O_TRUNC, 0600);
  loff_t from = 0;
  CHECK(splice(fd, &from, p[1], NULL, 100, 0) == 100);
  CHECK(splice(p[0], NULL, copy3, NULL, 100, 0) == 100);
  close(copy3);
  close(p[0]);
  close(p[1]);
  /* sendfile to a socket: the file's read, the socket's send (100 bytes each). */
  int sv[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  off = 0;
  CHECK(sendfile(sv[0], fd, &off, 100) == 100);
  CHECK(read(sv[1], a, sizeof(a)) == 100);
  close(sv[0]);
  close(sv[1]);
  /* A bad descriptor: -1 and EBADF, as without the interposer. */
  errno = 0;
  CHECK(preadv(-1, &r1, 1, 0) == -1 && errno == EBADF);
  close(fd);
}

/* Names relative to a directory descriptor: old.bin (10 bytes written) renamed to
 * new.bin with renameat, gone.bin deleted with unlinkat; a directory made and
 * removed (AT_REMOVEDIR: not a file). */
static void names(void) {
  int fd = open("old.bin", O_CREAT | O_WRONLY | O_TRUNC, 0600);
  CHECK(write(fd, "0123456789", 10) == 10);
  close(fd);
  fd = open("gone.bin", O_CREAT | O_WRONLY | O_TRUNC, 0600);
  close(fd);
  int dir = open(".", O_RDONLY | O_DIRECTORY);
  CHECK(renameat(dir, "old.bin", AT_FDCWD, "new.bin") == 0);
  CHECK(unlinkat(dir, "gone.bin", 0) == 0);
  CHECK(mkdirat(dir, "sub", 0700) == 0);
  CHECK(unlinkat(dir, "sub", AT_REMOVEDIR) == 0);
  close(dir);
}

int main(int argc, char** argv) {
  if (argc < 2 || chdir(argv[1]) != 0) {
    fprintf(stderr, "usage: pl_stdio <dir>\n");
    return 2;
  }
  streams();
  reopened();
  unlocked();
  vectors();
  names();
  printf("failures=%d\n", failures);
  return failures == 0 ? 0 : 1;
}

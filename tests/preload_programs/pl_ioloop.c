/* The io microbenchmark of the interposer: one io call in a loop, ns per call.
 * Usage: pl_ioloop <dir> <call> [iterations] [repetitions]
 *   call: getc (a byte at a time, never interposed), fread1 (fread of one byte:
 *   what a wait on every getc would cost), fread4k, fgets, fwrite64, pread, preadv,
 *   pwritev, preadv2, sendfile (4 KiB to /dev/null), copy_file_range (4 KiB, file
 *   to file at fixed offsets), sem_pair (sem_wait and sem_post of an unnamed
 *   semaphore that is free: one semaphore wait per pair).
 * Works on files it makes in <dir>. Prints the per-repetition ns per call and the
 * minimum and median (bench/preload_io.sh runs it with and without LD_PRELOAD).
 * PL_IOLOOP_THREAD=1: a second thread is started first and sleeps throughout, so the
 * process is multi-threaded (glibc's stdio then takes its stream locks atomically, as
 * it does under the interposer, whose watch thread is a second thread). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { kFileSize = 1 << 20 };

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static char buf[1 << 16];
static FILE* in;
static FILE* out;
static int fd = -1, dst = -1, devnull = -1;
static sem_t sem;

static const char* const kCalls[] = {"getc",     "fread1",   "fread4k",         "fgets",
                                     "fwrite64", "pread",    "preadv",          "preadv2",
                                     "pwritev",  "sendfile", "copy_file_range", "sem_pair"};
enum { kCallCount = sizeof(kCalls) / sizeof(kCalls[0]) };

/* One call of the kind; at the end of the file the stream starts over (rewind,
 * not interposed). */
static void call(int what) {
  struct iovec v = {buf, 64};
  off_t off = 0;
  loff_t a = 0, b = 0;
  switch (what) {
    case 0:
      if (getc(in) == EOF) rewind(in);
      break;
    case 1:
      if (fread(buf, 1, 1, in) != 1) rewind(in);
      break;
    case 2:
      if (fread(buf, 1, 4096, in) != 4096) rewind(in);
      break;
    case 3:
      if (fgets(buf, sizeof(buf), in) == NULL) rewind(in);
      break;
    case 4:
      fwrite(buf, 1, 64, out);
      break;
    case 5:
      if (pread(fd, buf, 64, 0) != 64) abort();
      break;
    case 6:
      if (preadv(fd, &v, 1, 0) != 64) abort();
      break;
    case 7:
      if (preadv2(fd, &v, 1, 0, 0) != 64) abort();
      break;
    case 8:
      if (pwritev(dst, &v, 1, 0) != 64) abort();
      break;
    case 9:
      if (sendfile(devnull, fd, &off, 4096) != 4096) abort();
      break;
    case 10:
      if (copy_file_range(fd, &a, dst, &b, 4096, 0) != 4096) abort();
      break;
    default:
      if (sem_wait(&sem) != 0 || sem_post(&sem) != 0) abort();
      break;
  }
}

static void* sleeper(void* arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3 || chdir(argv[1]) != 0) {
    fprintf(stderr, "usage: pl_ioloop <dir> <call> [iterations] [repetitions]\n");
    return 2;
  }
  int what = -1;
  for (int i = 0; i < kCallCount; ++i)
    if (strcmp(argv[2], kCalls[i]) == 0) what = i;
  if (what < 0) {
    fprintf(stderr, "pl_ioloop: unknown call %s\n", argv[2]);
    return 2;
  }
  const long n = argc > 3 ? atol(argv[3]) : 1000000L;
  const char* threaded = getenv("PL_IOLOOP_THREAD");
  pthread_t second;
  if (threaded != NULL && strcmp(threaded, "1") == 0 && pthread_create(&second, NULL, sleeper, NULL) != 0)
    return 1;
  const int reps = argc > 4 ? atoi(argv[4]) : 7;
  FILE* make = fopen("pl_ioloop.txt", "w");
  if (make == NULL) return 1;
  memset(buf, 'x', 63);
  buf[63] = '\n';
  for (int i = 0; i < kFileSize / 64; ++i) fwrite(buf, 1, 64, make);
  fclose(make);
  in = fopen("pl_ioloop.txt", "r");
  out = fopen("/dev/null", "w");
  fd = open("pl_ioloop.txt", O_RDONLY);
  dst = open("pl_ioloop.out", O_CREAT | O_RDWR | O_TRUNC, 0600);
  devnull = open("/dev/null", O_WRONLY);
  if (in == NULL || out == NULL || fd < 0 || dst < 0 || devnull < 0 || sem_init(&sem, 0, 1) != 0) return 1;
  for (long i = 0; i < n / 10; ++i) call(what); /* warm-up: the thread, the call site, the caches */
  double* ns = calloc((size_t)reps, sizeof(double));
  for (int r = 0; r < reps; ++r) {
    double t0 = now_ns();
    for (long i = 0; i < n; ++i) {
      call(what);
      __asm__ volatile("" ::: "memory");
    }
    ns[r] = (now_ns() - t0) / (double)n;
  }
  qsort(ns, (size_t)reps, sizeof(double), cmp);
  printf("call=%s\niterations=%ld\nrepetitions=%d\nmin_ns=%.2f\nmedian_ns=%.2f\n", argv[2], n, reps, ns[0],
         ns[reps / 2]);
  free(ns);
  unlink("pl_ioloop.out");
  return 0;
}

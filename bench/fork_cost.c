/* What a forked child costs (issue 41), run by bench/fork_cost.sh plain and under
 * the interposer: N times fork, the child locks a mutex once and _exit(0)s, the
 * parent waits for it; the time of each fork+exit+wait (CLOCK_MONOTONIC) is kept
 * and the median printed. With a PFS_REGION-like pattern as second argument
 * ("%p" for the child's pid), the parent removes each child's file after the wait,
 * outside the timed interval, except the last child's (the script measures it).
 * One more child, untimed, reports its memory: Private_Clean + Private_Dirty of
 * /proc/self/smaps_rollup (the pages no other process maps: its copies of the
 * parent's pages and its own region's pages) after its lock.
 * cpu_us is the CPU time (user + system, getrusage) of the parent and its children
 * over the N forks, per fork: on a machine shared with other work it varies far
 * less than the elapsed time; faults the page faults (minor and major, getrusage)
 * of the parent and its children per fork, which do not vary at all, and fault_us
 * what one page fault costs on this machine (the first write to each of 1024 new
 * pages, before the forks): on a virtual machine it is the fork's main cost.
 * Prints median_us=, p90_us=, cpu_us=, faults=, fault_us=, child_private_kb=,
 * last_child=. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double cpu_us(int who) {
  struct rusage u;
  getrusage(who, &u);
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 +
         (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static double faults(int who) {
  struct rusage u;
  getrusage(who, &u);
  return (double)(u.ru_minflt + u.ru_majflt);
}

/* us per page fault: the first write to each page of a new anonymous mapping. */
static double fault_cost_us(void) {
  const size_t pages = 1024, page = (size_t)sysconf(_SC_PAGESIZE);
  char* p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 0;
  const double start = now_us();
  for (size_t i = 0; i < pages; ++i) p[i * page] = 1;
  const double us = (now_us() - start) / (double)pages;
  munmap(p, pages * page);
  return us;
}

static void child_work(void) {
  pthread_mutex_lock(&lock);
  pthread_mutex_unlock(&lock);
}

/* The child's Private_* in kB, from its smaps_rollup, written to fd as text. */
static void report_private_kb(int fd) {
  FILE* f = fopen("/proc/self/smaps_rollup", "r");
  long total = 0, kb = 0;
  char line[256];
  while (f != NULL && fgets(line, sizeof(line), f) != NULL)
    if (sscanf(line, "Private_Clean: %ld kB", &kb) == 1 || sscanf(line, "Private_Dirty: %ld kB", &kb) == 1)
      total += kb;
  if (f != NULL) fclose(f);
  char text[32];
  const int n = snprintf(text, sizeof(text), "%ld", total);
  if (write(fd, text, (size_t)n) != n) _exit(2);
}

static void remove_childs_file(const char* pattern, pid_t pid) {
  char path[4096];
  size_t o = 0;
  for (const char* p = pattern; *p != '\0' && o + 24 < sizeof(path); ++p) {
    if (p[0] == '%' && p[1] == 'p') {
      o += (size_t)snprintf(path + o, sizeof(path) - o, "%d", (int)pid);
      ++p;
    } else {
      path[o++] = *p;
    }
  }
  path[o] = '\0';
  unlink(path);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fork_cost N [child-region-pattern]\n");
    return 2;
  }
  const int n = atoi(argv[1]);
  const char* pattern = argc > 2 ? argv[2] : NULL;
  if (n < 1) return 2;
  if (pthread_mutex_init(&lock, NULL) != 0) return 3;
  child_work(); /* the mutex is known (instrumented) before the first fork */
  double* times = calloc((size_t)n, sizeof(double));
  if (times == NULL) return 3;
  pid_t last = 0;
  const double fault_us = fault_cost_us();
  const double faults_start = faults(RUSAGE_SELF) + faults(RUSAGE_CHILDREN);
  const double cpu_start = cpu_us(RUSAGE_SELF) + cpu_us(RUSAGE_CHILDREN);
  for (int i = 0; i < n; ++i) {
    const double start = now_us();
    const pid_t pid = fork();
    if (pid < 0) return 4;
    if (pid == 0) {
      child_work();
      _exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 5;
    times[i] = now_us() - start;
    if (pattern != NULL && last != 0) remove_childs_file(pattern, last);
    last = pid;
  }
  const double cpu = (cpu_us(RUSAGE_SELF) + cpu_us(RUSAGE_CHILDREN) - cpu_start) / n;
  const double fault_count = (faults(RUSAGE_SELF) + faults(RUSAGE_CHILDREN) - faults_start) / n;
  int pipe_fd[2];
  if (pipe(pipe_fd) != 0) return 6;
  const pid_t probe = fork();
  if (probe < 0) return 4;
  if (probe == 0) {
    close(pipe_fd[0]);
    child_work();
    report_private_kb(pipe_fd[1]);
    _exit(0);
  }
  close(pipe_fd[1]);
  char kb[32] = "";
  const ssize_t got = read(pipe_fd[0], kb, sizeof(kb) - 1);
  kb[got > 0 ? got : 0] = '\0';
  int status = 0;
  if (waitpid(probe, &status, 0) != probe || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 5;
  if (pattern != NULL) remove_childs_file(pattern, probe);
  qsort(times, (size_t)n, sizeof(double), by_value);
  printf("median_us=%.1f\np90_us=%.1f\ncpu_us=%.1f\nfaults=%.1f\nfault_us=%.2f\nchild_private_kb=%s\nlast_child=%d\n",
         times[n / 2], times[n * 9 / 10], cpu, fault_count, fault_us, kb, (int)last);
  free(times);
  return 0;
}

/* fork and exec under the interposer: children lock the parent's mutex many
 * times (a forked child, one that execs this program again, one started by
 * system()); none of that may reach the parent's region. A second thread keeps
 * locking while the parent forks. Prints parent_locks=N. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kParentLocks = 100, kChildLocks = 5000 };

static pthread_mutex_t m;
static pthread_mutex_t bg = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop_bg = 0;

__attribute__((noinline)) void pl_fork_init(void) {
  if (pthread_mutex_init(&m, NULL) != 0) abort(); /* not a tail call: the caller is this function */
}

static void lock_n(int n) {
  for (int i = 0; i < n; ++i) {
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
  }
}

static void child_work(void) {
  lock_n(kChildLocks);
  int fd = open("/dev/null", O_WRONLY);
  if (fd >= 0) {
    for (int i = 0; i < 100; ++i)
      if (write(fd, "x", 1) != 1) _exit(3);
    close(fd);
  }
}

static void* background(void* arg) {
  (void)arg;
  while (!stop_bg) {
    pthread_mutex_lock(&bg);
    pthread_mutex_unlock(&bg);
  }
  return NULL;
}

static int wait_ok(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "exec-child") == 0) {
    pl_fork_init();
    child_work();
    return 0;
  }
  pl_fork_init();
  lock_n(kParentLocks / 2);
  pthread_t t;
  pthread_create(&t, NULL, background, NULL);

  int ok = 1;
  pid_t p1 = fork();
  if (p1 == 0) {
    child_work();
    exit(0); /* runs destructors: the interposer's must leave the parent's region alone */
  }
  pid_t p2 = fork();
  if (p2 == 0) {
    child_work();
    execl("/proc/self/exe", argv[0], "exec-child", (char*)NULL);
    _exit(2);
  }
  ok &= wait_ok(p1);
  ok &= wait_ok(p2);
  ok &= system("exit 0") == 0;

  stop_bg = 1;
  pthread_join(t, NULL);
  lock_n(kParentLocks / 2);
  printf("parent_locks=%d\nchildren_ok=%d\n", kParentLocks, ok);
  return ok ? 0 : 1;
}

/* A pre-forking program under the interposer (the agent-linked twin is
 * tests/fork/pfs_prefork.cpp): the parent locks a mutex and writes a file, forks
 * WORKERS workers while a second thread keeps locking, and each worker locks the
 * same mutex LOCKS times and writes BYTES bytes to a file of its own. With %p in
 * PFS_REGION every worker records into its own region. Prints parent_locks=N,
 * worker_locks=N, worker_bytes=N, workers_ok=1 and one worker=PID line each. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kParentLocks = 300, kMaxWorkers = 64 };

static pthread_mutex_t queue_lock;
static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop_busy = 0;

__attribute__((noinline)) void pl_prefork_init(void) {
  if (pthread_mutex_init(&queue_lock, NULL) != 0) abort(); /* not a tail call */
}

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v != NULL ? atoi(v) : fallback;
}

static void lock_n(int n) {
  for (int i = 0; i < n; ++i) {
    pthread_mutex_lock(&queue_lock);
    pthread_mutex_unlock(&queue_lock);
  }
}

static void write_file(const char* path, int bytes) {
  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd < 0) _exit(3);
  char* block = malloc((size_t)bytes);
  if (block == NULL) _exit(3);
  memset(block, 'x', (size_t)bytes);
  if (write(fd, block, (size_t)bytes) != bytes) _exit(4);
  free(block);
  close(fd);
}

static void* busy(void* arg) {
  (void)arg;
  while (!stop_busy) {
    pthread_mutex_lock(&busy_lock);
    pthread_mutex_unlock(&busy_lock);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: pl_prefork DIR\n");
    return 2;
  }
  const int workers = env_int("WORKERS", 3), locks = env_int("LOCKS", 1000), bytes = env_int("BYTES", 4096);
  if (workers > kMaxWorkers) return 2;
  char path[4096];
  pl_prefork_init();
  lock_n(kParentLocks);
  snprintf(path, sizeof(path), "%s/parent.data", argv[1]);
  write_file(path, bytes);
  pthread_t t;
  if (pthread_create(&t, NULL, busy, NULL) != 0) return 5;
  pid_t pids[kMaxWorkers];
  for (int w = 0; w < workers; ++w) {
    pids[w] = fork();
    if (pids[w] < 0) return 5;
    if (pids[w] == 0) {
      lock_n(locks);
      snprintf(path, sizeof(path), "%s/worker.%d.data", argv[1], (int)getpid());
      write_file(path, bytes);
      _exit(0);
    }
  }
  int ok = 1;
  for (int w = 0; w < workers; ++w) {
    int status = 0;
    ok = ok && waitpid(pids[w], &status, 0) == pids[w] && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  stop_busy = 1;
  pthread_join(t, NULL);
  printf("parent_locks=%d\nworker_locks=%d\nworker_bytes=%d\nworkers_ok=%d\n", kParentLocks, locks, bytes, ok);
  for (int w = 0; w < workers; ++w) printf("worker=%d\n", (int)pids[w]);
  return ok ? 0 : 6;
}

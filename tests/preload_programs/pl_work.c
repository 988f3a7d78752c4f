/* A plain program that marks its requests as statements and stages through the C
 * ABI (pfs_c.h) and locks and writes with plain pthread and libc calls. It does
 * not link the agent: the functions are weak references, resolved at run time by
 * libpfs_preload.so under LD_PRELOAD (one agent for the interposed waits and the
 * statements); without the interposer they are NULL and the program just runs. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/provider/pfs_c.h"

#pragma weak pfs_register_statement
#pragma weak pfs_register_stage
#pragma weak pfs_statement_start
#pragma weak pfs_statement_set_text
#pragma weak pfs_statement_end
#pragma weak pfs_stage_start

enum { kThreads = 2, kRequests = 200 };
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pfs_key request_key, locking_key, writing_key;
static const char* dir;

static void* worker(void* arg) {
  long n = (long)arg;
  char path[4096];
  snprintf(path, sizeof path, "%s/pl_work.%ld", dir, n);
  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  for (int i = 0; i < kRequests; ++i) {
    int level = pfs_statement_start ? pfs_statement_start(request_key, "pl", __FILE__, __LINE__) : 0;
    if (level) pfs_statement_set_text("UPDATE counters SET n = n + 1", 29);
    if (pfs_stage_start) pfs_stage_start(locking_key, __FILE__, __LINE__);
    pthread_mutex_lock(&shared); /* nests in stage "locking" */
    usleep(20);
    pthread_mutex_unlock(&shared);
    if (pfs_stage_start) pfs_stage_start(writing_key, __FILE__, __LINE__);
    if (write(fd, "x", 1) != 1) abort(); /* nests in stage "writing" */
    if (level) pfs_statement_end(level);
  }
  close(fd);
  unlink(path);
  return NULL;
}

int main(void) {
  dir = getenv("PL_WORK_DIR") ? getenv("PL_WORK_DIR") : "/tmp";
  if (pfs_register_statement) {
    request_key = pfs_register_statement("pl", "request");
    locking_key = pfs_register_stage("pl", "locking");
    writing_key = pfs_register_stage("pl", "writing");
  }
  pthread_t t[kThreads];
  for (long i = 0; i < kThreads; ++i) pthread_create(&t[i], NULL, worker, (void*)i);
  for (int i = 0; i < kThreads; ++i) pthread_join(t[i], NULL);
  printf("interposed=%d\nstatements=%d\n", pfs_statement_start != NULL, kThreads * kRequests);
  return 0;
}

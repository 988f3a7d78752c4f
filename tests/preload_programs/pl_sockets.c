/* Socket io of an unmodified program under the interposer: a TCP connection over
 * loopback between two threads (send/recv, read/write, accept), a socketpair with
 * sendmsg/recvmsg, and a socket made by a raw system call (not through the C
 * library's socket(), so the interposer finds it with fstat on its first io). A
 * regular pipe's io is not a socket's. Prints what it did as key=value lines. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static int failures;
static unsigned short port;

#define CHECK(c)                                                   \
  do {                                                             \
    if (!(c)) {                                                    \
      ++failures;                                                  \
      fprintf(stderr, "pl_sockets:%d: %s failed\n", __LINE__, #c); \
    }                                                              \
  } while (0)

static void* client(void* arg) {
  (void)arg;
  int c = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(c >= 0);
  struct sockaddr_in to;
  memset(&to, 0, sizeof(to));
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(connect(c, (struct sockaddr*)&to, sizeof(to)) == 0);
  char buf[256];
  memset(buf, 'c', sizeof(buf));
  CHECK(send(c, buf, 100, 0) == 100);
  CHECK(write(c, buf, 156) == 156);
  size_t got = 0;
  while (got < 40) {
    ssize_t r = recv(c, buf, sizeof(buf), 0);
    CHECK(r > 0);
    if (r <= 0) break;
    got += (size_t)r;
  }
  CHECK(close(c) == 0);
  return NULL;
}

int main(void) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(l >= 0);
  struct sockaddr_in any;
  memset(&any, 0, sizeof(any));
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(bind(l, (struct sockaddr*)&any, sizeof(any)) == 0);
  socklen_t n = sizeof(any);
  CHECK(getsockname(l, (struct sockaddr*)&any, &n) == 0);
  port = ntohs(any.sin_port);
  CHECK(listen(l, 4) == 0);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, client, NULL) == 0);
  int a = accept(l, NULL, NULL);
  CHECK(a >= 0);
  char buf[512];
  size_t got = 0;
  int reads = 0;
  while (got < 256) {
    ssize_t r = read(a, buf, sizeof(buf) - got);
    CHECK(r > 0);
    if (r <= 0) break;
    got += (size_t)r;
    ++reads;
  }
  CHECK(send(a, buf, 40, 0) == 40);
  pthread_join(t, NULL);

  /* socketpair: sendmsg / recvmsg */
  int sv[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  struct iovec iov = {buf, 30};
  struct msghdr m;
  memset(&m, 0, sizeof(m));
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  CHECK(sendmsg(sv[0], &m, 0) == 30);
  CHECK(recvmsg(sv[1], &m, 0) == 30);
  errno = 0;
  CHECK(recv(sv[1], buf, 10, MSG_DONTWAIT) == -1 && errno == EAGAIN); /* errno untouched */

  /* a socket the C library did not make: found with fstat on its first io */
  int raw = (int)syscall(SYS_socket, AF_UNIX, SOCK_DGRAM, 0);
  int raw2[2];
  CHECK(raw >= 0);
  CHECK(syscall(SYS_socketpair, AF_UNIX, SOCK_DGRAM, 0, raw2) == 0);
  CHECK(write(raw2[0], buf, 12) == 12);
  CHECK(read(raw2[1], buf, 12) == 12);

  /* a pipe: not a socket */
  int p[2];
  CHECK(pipe(p) == 0);
  CHECK(write(p[1], buf, 5) == 5);
  CHECK(read(p[0], buf, 5) == 5);

  printf("port=%u\nserver_reads=%d\nfailures=%d\n", (unsigned)port, reads, failures);
  fflush(stdout);
  close(p[0]);
  close(p[1]);
  close(raw);
  close(raw2[0]);
  close(raw2[1]);
  close(sv[0]);
  /* sv[1], a and l stay open: socket_instances shows them */
  return failures == 0 ? 0 : 1;
}

// Socket io waits through the C++ API (pfs_socket.h): real sockets over loopback
// and socketpair, real threads. socket_instances rows (ip, port, state, owner),
// summaries equal to the calls made, operations in events_waits_history_long,
// TRUNCATE through the FDW core, and a full instance array counted as lost.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <thread>

#include "agent/provider/pfs_socket.h"
#include "fdw/pfs_core.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

using namespace pfs;
using pfs::test::I;
using pfs::test::in_child;
using pfs::test::S;
using pfs::test::scan;
using pfs::test::small_options;

namespace {

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

std::uint16_t local_port(int fd) {
  sockaddr_in a{};
  socklen_t n = sizeof(a);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n), 0);
  return ntohs(a.sin_port);
}

const test::named_row* by_socket_id(const std::vector<test::named_row>& rows, int fd) {
  for (const auto& r : rows)
    if (I(r, "socket_id") == fd) return &r;
  return nullptr;
}

const test::named_row* by_name(const std::vector<test::named_row>& rows, const std::string& name) {
  for (const auto& r : rows)
    if (S(r, "event_name") == name) return &r;
  return nullptr;
}

// OPERATION -> count of the socket waits of class name in events_waits_history_long.
std::map<std::string, int> operations(const std::string& name) {
  std::map<std::string, int> ops;
  for (const auto& r : scan("events_waits_history_long"))
    if (S(r, "event_name") == name) ++ops[S(r, "operation")];
  return ops;
}

}  // namespace

TEST(SocketIo, LoopbackConnectionRowsSummariesAndWaits) {
  in_child([] {
    options o = small_options("socket_tcp");
    o.sizes.history_long_size = 256;
    ASSERT_TRUE(init(o)) << last_error();
    const pfs_key listener = socket::register_class("app", "listener");
    const pfs_key server = socket::register_class("app", "server_connection");
    const pfs_key client = socket::register_class("app", "client_connection");
    ASSERT_NE(listener, 0u);

    const int l = socket::socket(listener, AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(l, 0);
    sockaddr_in any = loopback(0);
    ASSERT_EQ(socket::bind(l, reinterpret_cast<sockaddr*>(&any), sizeof(any)), 0);
    ASSERT_EQ(socket::listen(l, 4), 0);
    const std::uint16_t port = local_port(l);

    // The client: its own thread connects, sends 3 requests, reads one reply.
    int c = -1;
    std::uint16_t client_port = 0;
    std::uint64_t client_thread = 0;
    std::thread t([&] {
      client_thread = thread_id();
      c = socket::socket(client, AF_INET, SOCK_STREAM, 0);
      ASSERT_GE(c, 0);
      sockaddr_in to = loopback(port);
      ASSERT_EQ(socket::connect(c, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
      client_port = local_port(c);
      char buf[300];
      std::memset(buf, 'q', sizeof(buf));
      for (std::size_t n : {100u, 200u, 300u}) ASSERT_EQ(socket::send(c, buf, n, 0), static_cast<ssize_t>(n));
      std::size_t got = 0;
      while (got < 50) {
        const ssize_t r = socket::recv(c, buf, sizeof(buf), 0);
        ASSERT_GT(r, 0);
        got += static_cast<std::size_t>(r);
      }
    });
    sockaddr_in peer{};
    socklen_t peer_len = sizeof(peer);
    const int a = socket::accept(server, l, reinterpret_cast<sockaddr*>(&peer), &peer_len);
    ASSERT_GE(a, 0);
    EXPECT_EQ(peer_len, sizeof(peer));
    char buf[600];
    std::size_t got = 0;
    int recvs = 0;
    while (got < 600) {
      const ssize_t r = socket::recv(a, buf, sizeof(buf) - got, 0);
      ASSERT_GT(r, 0);
      got += static_cast<std::size_t>(r);
      ++recvs;
    }
    ASSERT_EQ(socket::send(a, buf, 50, 0), 50);
    t.join();
    socket::set_idle(a, true);

    // socket_instances: the listener shows its local address, connections their peer.
    const auto rows = scan("socket_instances");
    ASSERT_EQ(rows.size(), 3u);
    const auto* lr = by_socket_id(rows, l);
    const auto* ar = by_socket_id(rows, a);
    const auto* cr = by_socket_id(rows, c);
    ASSERT_TRUE(lr && ar && cr);
    EXPECT_EQ(S(*lr, "event_name"), "wait/io/socket/app/listener");
    EXPECT_EQ(S(*lr, "ip"), "127.0.0.1");
    EXPECT_EQ(I(*lr, "port"), port);
    EXPECT_EQ(S(*lr, "state"), "ACTIVE");
    EXPECT_EQ(I(*lr, "thread_id"), static_cast<std::int64_t>(thread_id()));
    EXPECT_EQ(S(*ar, "event_name"), "wait/io/socket/app/server_connection");
    EXPECT_EQ(S(*ar, "ip"), "127.0.0.1");
    EXPECT_EQ(I(*ar, "port"), client_port);
    EXPECT_EQ(S(*ar, "state"), "IDLE");
    EXPECT_EQ(S(*cr, "event_name"), "wait/io/socket/app/client_connection");
    EXPECT_EQ(I(*cr, "port"), port);
    EXPECT_EQ(I(*cr, "thread_id"), static_cast<std::int64_t>(client_thread));
    EXPECT_NE(I(*cr, "object_instance_begin"), I(*ar, "object_instance_begin"));

    // Summaries: what was called, bytes included.
    const auto sums = scan("socket_summary_by_instance");
    std::map<std::int64_t, const test::named_row*> by_identity;
    for (const auto& r : sums) by_identity[I(r, "object_instance_begin")] = &r;
    const auto& as = *by_identity.at(I(*ar, "object_instance_begin"));
    EXPECT_EQ(I(as, "count_read"), recvs);
    EXPECT_EQ(I(as, "sum_number_of_bytes_read"), 600);
    EXPECT_EQ(I(as, "count_write"), 1);
    EXPECT_EQ(I(as, "sum_number_of_bytes_write"), 50);
    EXPECT_EQ(I(as, "count_misc"), 0);
    EXPECT_EQ(I(as, "count_star"), recvs + 1);
    const auto& cs = *by_identity.at(I(*cr, "object_instance_begin"));
    EXPECT_EQ(I(cs, "count_write"), 3);
    EXPECT_EQ(I(cs, "sum_number_of_bytes_write"), 600);
    EXPECT_EQ(I(cs, "sum_number_of_bytes_read"), 50);
    EXPECT_EQ(I(cs, "count_misc"), 1);  // connect
    const auto& ls = *by_identity.at(I(*lr, "object_instance_begin"));
    EXPECT_EQ(I(ls, "count_misc"), 3);  // bind, listen (opt), accept (connect)
    EXPECT_GT(I(ls, "sum_timer_misc"), 0);

    // The waits, in MySQL's words, with the socket as object.
    EXPECT_EQ(operations("wait/io/socket/app/listener"),
              (std::map<std::string, int>{{"bind", 1}, {"opt", 1}, {"connect", 1}}));
    EXPECT_EQ(operations("wait/io/socket/app/client_connection"),
              (std::map<std::string, int>{{"connect", 1}, {"send", 3}, {"recv", I(cs, "count_read")}}));
    bool seen_send = false;
    for (const auto& r : scan("events_waits_history_long")) {
      if (S(r, "event_name") != "wait/io/socket/app/server_connection" || S(r, "operation") != "send")
        continue;
      seen_send = true;
      EXPECT_EQ(S(r, "object_type"), "SOCKET");
      EXPECT_EQ(S(r, "object_name"), "127.0.0.1:" + std::to_string(client_port));
      EXPECT_EQ(S(r, "object_schema"), "<NULL>");
      EXPECT_EQ(I(r, "number_of_bytes"), 50);
      EXPECT_EQ(I(r, "object_instance_begin"), I(*ar, "object_instance_begin"));
    }
    EXPECT_TRUE(seen_send);

    // Closed sockets leave socket_instances; their class keeps their statistics.
    ASSERT_EQ(socket::close(c), 0);
    ASSERT_EQ(socket::close(a), 0);
    EXPECT_EQ(scan("socket_instances").size(), 1u);
    const auto by_event = scan("socket_summary_by_event_name");
    ASSERT_EQ(by_event.size(), 3u);
    EXPECT_EQ(I(*by_name(by_event, "wait/io/socket/app/client_connection"), "sum_number_of_bytes_write"),
              600);
    EXPECT_EQ(I(*by_name(by_event, "wait/io/socket/app/server_connection"), "count_misc"), 1);  // close
    // The global wait summary has the socket classes with the STAR group.
    const auto global = scan("events_waits_summary_global_by_event_name");
    EXPECT_EQ(I(*by_name(global, "wait/io/socket/app/server_connection"), "count_star"), recvs + 2);
    ASSERT_EQ(socket::close(l), 0);
  });
}

TEST(SocketIo, SocketpairMessagesErrnoAndState) {
  in_child([] {
    ASSERT_TRUE(init(small_options("socket_pair"))) << last_error();
    const pfs_key k = socket::register_class("app", "pair");
    int sv[2];
    ASSERT_EQ(socket::socketpair(k, AF_UNIX, SOCK_DGRAM, 0, sv), 0);
    char data[64] = "hello";
    iovec iov{data, 10};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    ASSERT_EQ(socket::sendmsg(sv[0], &m, 0), 10);
    char in[64];
    iovec iov_in{in, sizeof(in)};
    msghdr mi{};
    mi.msg_iov = &iov_in;
    mi.msg_iovlen = 1;
    ASSERT_EQ(socket::recvmsg(sv[1], &mi, 0), 10);
    ASSERT_EQ(socket::sendto(sv[1], data, 7, 0, nullptr, 0), 7);
    ASSERT_EQ(socket::recvfrom(sv[0], in, sizeof(in), 0, nullptr, nullptr), 7);
    // A failed call keeps its errno and is a wait too.
    errno = 0;
    EXPECT_EQ(socket::recv(sv[0], in, sizeof(in), MSG_DONTWAIT), -1);
    EXPECT_EQ(errno, EAGAIN);
    ASSERT_EQ(socket::shutdown(sv[0], SHUT_RDWR), 0);

    const auto rows = scan("socket_instances");
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& r : rows) {
      EXPECT_EQ(S(r, "ip"), "");
      EXPECT_EQ(I(r, "port"), 0);
      EXPECT_EQ(S(r, "state"), "ACTIVE");
    }
    const auto ops = operations("wait/io/socket/app/pair");
    EXPECT_EQ(
        ops,
        (std::map<std::string, int>{
            {"sendmsg", 1}, {"recvmsg", 1}, {"sendto", 1}, {"recvfrom", 1}, {"recv", 1}, {"shutdown", 1}}));
    for (const auto& r : scan("events_waits_history_long"))
      if (S(r, "operation") == "recv") {
        EXPECT_EQ(I(r, "number_of_bytes"), -1);  // failed: NULL
        EXPECT_EQ(S(r, "object_name"), ":0");    // a unix socket: no IP, port 0 (MySQL's)
      }
    const auto by_event = scan("socket_summary_by_event_name");
    ASSERT_EQ(by_event.size(), 1u);
    EXPECT_EQ(I(by_event[0], "count_read"), 3);  // recvmsg, recvfrom, the failed recv
    EXPECT_EQ(I(by_event[0], "sum_number_of_bytes_read"), 17);
    EXPECT_EQ(I(by_event[0], "count_write"), 2);
    EXPECT_EQ(I(by_event[0], "sum_number_of_bytes_write"), 17);
    EXPECT_EQ(I(by_event[0], "count_misc"), 1);
    ASSERT_EQ(socket::close(sv[0]), 0);
    ASSERT_EQ(socket::close(sv[1]), 0);
    EXPECT_TRUE(scan("socket_instances").empty());
  });
}

TEST(SocketIo, TruncateResetsTheSummaries) {
  in_child([] {
    ASSERT_TRUE(init(small_options("socket_truncate"))) << last_error();
    const pfs_key k = socket::register_class("app", "pair");
    int sv[2];
    ASSERT_EQ(socket::socketpair(k, AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ASSERT_EQ(socket::send(sv[0], "abc", 3, 0), 3);
    char in[8];
    ASSERT_EQ(socket::recv(sv[1], in, sizeof(in), 0), 3);
    int closed[2];
    ASSERT_EQ(socket::socketpair(k, AF_UNIX, SOCK_STREAM, 0, closed), 0);
    ASSERT_EQ(socket::send(closed[0], "abcd", 4, 0), 4);
    ASSERT_EQ(socket::close(closed[0]), 0);  // its statistics go to the class
    ASSERT_EQ(socket::close(closed[1]), 0);
    ASSERT_EQ(I(scan("socket_summary_by_event_name")[0], "sum_number_of_bytes_write"), 7);

    ASSERT_TRUE(pfs_core_init());
    PfsCoreWriteError err{};
    const std::string path = current_region()->path();
    const int by_instance = static_cast<int>(reader::table_id::socket_summary_by_instance);
    const int by_event = static_cast<int>(reader::table_id::socket_summary_by_event_name);
    ASSERT_TRUE(pfs_core_write_truncate(path.c_str(), by_instance, 1, 0, &err)) << err.error.message;
    ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err)) << err.error.message;
    for (const auto& r : scan("socket_summary_by_instance")) {
      EXPECT_EQ(I(r, "count_star"), 0);
      EXPECT_EQ(I(r, "sum_number_of_bytes_read"), 0);
    }
    EXPECT_EQ(I(scan("socket_summary_by_event_name")[0], "count_star"), 0);
    EXPECT_EQ(scan("socket_instances").size(), 2u);  // the rows stay

    ASSERT_EQ(socket::send(sv[0], "xy", 2, 0), 2);  // counting goes on
    ASSERT_TRUE(pfs_core_write_truncate(path.c_str(), by_event, 1, 0, &err)) << err.error.message;
    ASSERT_TRUE(pfs_core_write_commit(nullptr, 0, &err)) << err.error.message;
    EXPECT_EQ(I(scan("socket_summary_by_event_name")[0], "count_write"), 0);
    // Other writes are refused.
    EXPECT_EQ(pfs_core_table_operations(by_instance), PFS_CORE_OP_TRUNCATE);
    EXPECT_EQ(pfs_core_table_operations(static_cast<int>(reader::table_id::socket_instances)), 0);
    socket::close(sv[0]);
    socket::close(sv[1]);
  });
}

TEST(SocketIo, FullInstanceArrayCountsLostAndKeepsRunning) {
  in_child([] {
    options o = small_options("socket_lost");
    o.sizes.max_sockets = 1;
    ASSERT_TRUE(init(o)) << last_error();
    const pfs_key k = socket::register_class("app", "pair");
    int sv[2];
    ASSERT_EQ(socket::socketpair(k, AF_UNIX, SOCK_STREAM, 0, sv), 0);
    EXPECT_EQ(test::lost(*current_region(), layout::kLostSocketInstances), 1u);
    ASSERT_EQ(socket::send(sv[1], "abc", 3, 0), 3);  // the socket without a row works
    char in[8];
    ASSERT_EQ(socket::recv(sv[0], in, sizeof(in), 0), 3);
    std::int64_t lost = -1;
    for (const auto& r : scan("status"))
      if (S(r, "variable_name") == "socket_instances_lost") lost = I(r, "variable_value");
    EXPECT_EQ(lost, 1);
    ASSERT_EQ(scan("socket_instances").size(), 1u);
    EXPECT_EQ(I(scan("socket_summary_by_instance")[0], "count_read"), 1);
    EXPECT_EQ(socket::close(sv[0]), 0);
    EXPECT_EQ(socket::close(sv[1]), 0);
    EXPECT_TRUE(scan("socket_instances").empty());
  });
}

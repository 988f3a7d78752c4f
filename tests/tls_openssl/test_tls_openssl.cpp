// pfs_tls_channel_fill_from_ssl_ctx with real OpenSSL contexts: a self-signed
// certificate made here (fixed validity, so its dates are known), a server and a
// client context that complete one handshake through a memory BIO pair, and the
// channels' rows read back from tls_channel_status: the counters of that handshake,
// the certificate's dates in MySQL's format, the verify and session cache settings,
// the versions and the file names the program gave.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <map>
#include <string>

#include "agent/provider/pfs_tls.h"
#include "agent/tls_openssl/pfs_tls_openssl.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

using pfs::test::in_child;
using pfs::test::S;
using pfs::test::scan;

// A self-signed EC certificate valid from 2026-01-01 to 2036-01-01 (UTC).
struct self_signed {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  self_signed() {
    key = EVP_EC_gen("P-256");
    cert = X509_new();
    if (key == nullptr || cert == nullptr) return;
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    ASN1_TIME_set_string(X509_getm_notBefore(cert), "20260101000000Z");
    ASN1_TIME_set_string(X509_getm_notAfter(cert), "20360101000000Z");
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("perfschema test"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509_set_pubkey(cert, key);
    X509_sign(cert, key, EVP_sha256());
  }
  ~self_signed() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
};

// The rows of one channel as property -> value (the last channel of that name).
std::map<std::string, std::string> properties_of(const std::string& channel) {
  std::map<std::string, std::string> out;
  for (const auto& r : scan("tls_channel_status"))
    if (S(r, "channel") == channel) out[S(r, "property")] = S(r, "value");
  return out;
}

// One handshake between a client and a server context through a BIO pair.
bool handshake(SSL_CTX* server_ctx, SSL_CTX* client_ctx) {
  SSL* server = SSL_new(server_ctx);
  SSL* client = SSL_new(client_ctx);
  BIO *server_io = nullptr, *client_io = nullptr;
  BIO_new_bio_pair(&server_io, 0, &client_io, 0);
  SSL_set_bio(server, server_io, server_io);
  SSL_set_bio(client, client_io, client_io);
  SSL_set_accept_state(server);
  SSL_set_connect_state(client);
  bool server_done = false, client_done = false;
  for (int round = 0; round < 20 && !(server_done && client_done); ++round) {
    if (!client_done) client_done = SSL_do_handshake(client) == 1;
    if (!server_done) server_done = SSL_do_handshake(server) == 1;
  }
  SSL_free(client);
  SSL_free(server);
  return server_done && client_done;
}

TEST(TlsOpenssl, AServerAndAClientContextAfterOneHandshake) {
  in_child([] {
    pfs::options o = pfs::test::small_options("tls_openssl");
    o.sizes.max_tls_properties = 64;
    ASSERT_TRUE(pfs::init(o));
    self_signed made;
    ASSERT_NE(made.cert, nullptr);
    SSL_CTX* server_ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX* client_ctx = SSL_CTX_new(TLS_client_method());
    ASSERT_TRUE(server_ctx != nullptr && client_ctx != nullptr);
    ASSERT_EQ(SSL_CTX_use_certificate(server_ctx, made.cert), 1);
    ASSERT_EQ(SSL_CTX_use_PrivateKey(server_ctx, made.key), 1);
    ASSERT_EQ(SSL_CTX_set_min_proto_version(server_ctx, TLS1_2_VERSION), 1);
    ASSERT_EQ(SSL_CTX_set_ciphersuites(server_ctx, "TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256"), 1);
    SSL_CTX_set_verify_depth(server_ctx, 7);
    SSL_CTX_set_verify(client_ctx, SSL_VERIFY_NONE, nullptr);
    SSL_CTX_set_session_cache_mode(client_ctx, SSL_SESS_CACHE_CLIENT);
    ASSERT_TRUE(handshake(server_ctx, client_ctx));

    pfs::tls_channel server{"mysql_main"};
    pfs::tls_channel client{"replication"};
    const pfs_tls_options given{"ca.pem", nullptr, "server-cert.pem", "server-key.pem", nullptr,
                                nullptr,  nullptr, nullptr,           nullptr};
    EXPECT_EQ(pfs_tls_channel_fill_from_ssl_ctx(server.handle(), server_ctx, &given), 27);
    EXPECT_EQ(pfs_tls_channel_fill_from_ssl_ctx(client.handle(), client_ctx, nullptr), 27);
    EXPECT_EQ(pfs_tls_channel_fill_from_ssl_ctx(nullptr, server_ctx, nullptr), 0);
    EXPECT_EQ(pfs_tls_channel_fill_from_ssl_ctx(server.handle(), nullptr, nullptr), 0);

    auto p = properties_of("mysql_main");
    ASSERT_EQ(p.size(), 27u);
    EXPECT_EQ(p["Ssl_accepts"], "1");
    EXPECT_EQ(p["Ssl_finished_accepts"], "1");
    EXPECT_EQ(p["Ssl_client_connects"], "0");
    EXPECT_EQ(p["Ssl_server_not_before"], "Jan  1 00:00:00 2026 GMT");
    EXPECT_EQ(p["Ssl_server_not_after"], "Jan  1 00:00:00 2036 GMT");
    EXPECT_EQ(p["Ssl_ctx_verify_depth"], "7");
    EXPECT_EQ(p["Ssl_ctx_verify_mode"], "0");
    EXPECT_EQ(p["Ssl_session_cache_mode"], "SERVER");  // OpenSSL's default for a context
    EXPECT_EQ(p["Current_tls_version"], "TLSv1.2,TLSv1.3");
    EXPECT_EQ(p["Current_tls_ciphersuites"], "TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256");
    EXPECT_FALSE(p["Current_tls_cipher"].empty());
    EXPECT_EQ(p["Current_tls_cipher"].find("TLS_AES_"), std::string::npos);  // TLS 1.3 suites apart
    EXPECT_EQ(p["Current_tls_ca"], "ca.pem");
    EXPECT_EQ(p["Current_tls_cert"], "server-cert.pem");
    EXPECT_EQ(p["Current_tls_key"], "server-key.pem");
    EXPECT_EQ(p["Current_tls_capath"], "");
    EXPECT_EQ(p["Ssl_session_cache_size"], std::to_string(SSL_CTX_sess_get_cache_size(server_ctx)));

    auto c = properties_of("replication");
    EXPECT_EQ(c["Ssl_client_connects"], "1");
    EXPECT_EQ(c["Ssl_finished_connects"], "1");
    EXPECT_EQ(c["Ssl_accepts"], "0");
    EXPECT_EQ(c["Ssl_session_cache_mode"], "CLIENT");
    EXPECT_EQ(c["Ssl_server_not_after"], "");  // no certificate of its own

    // Filled again after a second handshake: the same rows, the counters moved.
    ASSERT_TRUE(handshake(server_ctx, client_ctx));
    EXPECT_EQ(pfs_tls_channel_fill_from_ssl_ctx(server.handle(), server_ctx, &given), 27);
    p = properties_of("mysql_main");
    EXPECT_EQ(p["Ssl_accepts"], "2");
    EXPECT_EQ(scan("tls_channel_status").size(), 54u);
    SSL_CTX_free(client_ctx);
    SSL_CTX_free(server_ctx);
  });
}

}  // namespace

// pfs_tls_channel_fill_from_ssl_ctx: MySQL 8.0's tls_channel_status properties of
// a channel (sql/ssl_acceptor_context_data.cc, show_property) read from an SSL_CTX.
#include "agent/tls_openssl/pfs_tls_openssl.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/x509.h>

#include <cstring>
#include <string>

namespace {

// As MySQL: ASN1_TIME_print's text ("Jan  1 00:00:00 2026 GMT"); empty without a time.
std::string time_text(const ASN1_TIME* t) {
  if (t == nullptr) return {};
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return {};
  std::string out;
  if (ASN1_TIME_print(bio, t) == 1) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    if (n > 0 && data != nullptr) out.assign(data, static_cast<std::size_t>(n));
  }
  BIO_free(bio);
  return out;
}

// MySQL's names of SSL_CTX_get_session_cache_mode's values.
const char* cache_mode_text(long mode) {
  switch (mode) {
    case SSL_SESS_CACHE_OFF:
      return "OFF";
    case SSL_SESS_CACHE_CLIENT:
      return "CLIENT";
    case SSL_SESS_CACHE_SERVER:
      return "SERVER";
    case SSL_SESS_CACHE_BOTH:
      return "BOTH";
    case SSL_SESS_CACHE_NO_AUTO_CLEAR:
      return "NO_AUTO_CLEAR";
    case SSL_SESS_CACHE_NO_INTERNAL_LOOKUP:
      return "NO_INTERNAL_LOOKUP";
    default:
      return "UNKNOWN";
  }
}

// The context's ciphers, ':'-separated: TLS 1.3 suites (tls13) or the others.
std::string cipher_list(SSL_CTX* ctx, bool tls13) {
  std::string out;
  STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(ctx);
  for (int i = 0; ciphers != nullptr && i < sk_SSL_CIPHER_num(ciphers); ++i) {
    const SSL_CIPHER* c = sk_SSL_CIPHER_value(ciphers, i);
    if ((std::strcmp(SSL_CIPHER_get_version(c), "TLSv1.3") == 0) != tls13) continue;
    if (!out.empty()) out += ':';
    out += SSL_CIPHER_get_name(c);
  }
  return out;
}

// The versions between the context's minimum and maximum, as MySQL's tls_version
// option is written ("TLSv1.2,TLSv1.3"); 0 is OpenSSL's "no limit".
std::string version_list(SSL_CTX* ctx) {
  struct version {
    long number;
    const char* name;
  };
  static constexpr version kVersions[] = {{TLS1_VERSION, "TLSv1"},
                                          {TLS1_1_VERSION, "TLSv1.1"},
                                          {TLS1_2_VERSION, "TLSv1.2"},
                                          {TLS1_3_VERSION, "TLSv1.3"}};
  const long min = SSL_CTX_get_min_proto_version(ctx);
  const long max = SSL_CTX_get_max_proto_version(ctx);
  std::string out;
  for (const version& v : kVersions) {
    if ((min != 0 && v.number < min) || (max != 0 && v.number > max)) continue;
    if (!out.empty()) out += ',';
    out += v.name;
  }
  return out;
}

struct filler {
  pfs_tls_channel* channel;
  int shown = 0;
  void set(const char* property, const std::string& value) {
    shown += pfs_tls_channel_set(channel, property, value.c_str());
  }
  void set(const char* property, const char* given, const std::string& otherwise = {}) {
    set(property, given != nullptr ? std::string(given) : otherwise);
  }
};

}  // namespace

extern "C" int pfs_tls_channel_fill_from_ssl_ctx(pfs_tls_channel* channel, SSL_CTX* ctx,
                                                 const pfs_tls_options* given) {
  if (channel == nullptr || ctx == nullptr) return 0;
  const pfs_tls_options none{};
  const pfs_tls_options& g = given != nullptr ? *given : none;
  const X509* cert = SSL_CTX_get0_certificate(ctx);
  filler f{channel};
  // MySQL's order (its Ssl_acceptor_context_property_type).
  f.set("Ssl_accept_renegotiates", std::to_string(SSL_CTX_sess_accept_renegotiate(ctx)));
  f.set("Ssl_accepts", std::to_string(SSL_CTX_sess_accept(ctx)));
  f.set("Ssl_callback_cache_hits", std::to_string(SSL_CTX_sess_cb_hits(ctx)));
  f.set("Ssl_client_connects", std::to_string(SSL_CTX_sess_connect(ctx)));
  f.set("Ssl_connect_renegotiates", std::to_string(SSL_CTX_sess_connect_renegotiate(ctx)));
  f.set("Ssl_ctx_verify_depth", std::to_string(SSL_CTX_get_verify_depth(ctx)));
  f.set("Ssl_ctx_verify_mode", std::to_string(SSL_CTX_get_verify_mode(ctx)));
  f.set("Current_tls_ca", g.ca);
  f.set("Current_tls_capath", g.capath);
  f.set("Current_tls_cert", g.cert);
  f.set("Current_tls_cipher", g.cipher, cipher_list(ctx, false));
  f.set("Current_tls_ciphersuites", g.ciphersuites, cipher_list(ctx, true));
  f.set("Current_tls_crl", g.crl);
  f.set("Current_tls_crlpath", g.crlpath);
  f.set("Current_tls_key", g.key);
  f.set("Current_tls_version", g.version, version_list(ctx));
  f.set("Ssl_finished_accepts", std::to_string(SSL_CTX_sess_accept_good(ctx)));
  f.set("Ssl_finished_connects", std::to_string(SSL_CTX_sess_connect_good(ctx)));
  f.set("Ssl_server_not_after", cert == nullptr ? std::string() : time_text(X509_get0_notAfter(cert)));
  f.set("Ssl_server_not_before", cert == nullptr ? std::string() : time_text(X509_get0_notBefore(cert)));
  f.set("Ssl_session_cache_hits", std::to_string(SSL_CTX_sess_hits(ctx)));
  f.set("Ssl_session_cache_misses", std::to_string(SSL_CTX_sess_misses(ctx)));
  f.set("Ssl_session_cache_mode", cache_mode_text(SSL_CTX_get_session_cache_mode(ctx)));
  f.set("Ssl_session_cache_overflows", std::to_string(SSL_CTX_sess_cache_full(ctx)));
  f.set("Ssl_session_cache_size", std::to_string(SSL_CTX_sess_get_cache_size(ctx)));
  f.set("Ssl_session_cache_timeouts", std::to_string(SSL_CTX_sess_timeouts(ctx)));
  f.set("Ssl_used_session_cache_entries", std::to_string(SSL_CTX_sess_number(ctx)));
  return f.shown;
}

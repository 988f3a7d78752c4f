/* The properties of a TLS channel (pfs_c.h: pfs_register_tls_channel) read from an
 * OpenSSL SSL_CTX, as MySQL 8.0 shows its channels in tls_channel_status
 * (sql/ssl_acceptor_context_data.cc): the session counters (Ssl_accepts,
 * Ssl_finished_accepts, Ssl_session_cache_hits ...), verify mode and depth, the
 * session cache mode and size, the certificate's Ssl_server_not_before and
 * Ssl_server_not_after ("Mon DD HH:MM:SS YYYY GMT", OpenSSL's ASN1_TIME_print),
 * the TLS versions, ciphers and ciphersuites the context allows.
 *
 * OpenSSL does not keep the file names the context was loaded from: the program
 * gives them (and any option it wants shown as it was written, such as its cipher
 * list) in `given`, or passes NULL; fields left NULL are shown as MySQL shows an
 * unset option, empty, except cipher, ciphersuites and version, which are then
 * read from the context.
 *
 * Library pfs_tls_openssl (built when OpenSSL's headers are found); link it and
 * OpenSSL::SSL. Call it again whenever the counters should be current (the table
 * shows what was last written). */
#ifndef PFS_TLS_OPENSSL_H
#define PFS_TLS_OPENSSL_H

#include <openssl/ssl.h>

#include "agent/provider/pfs_c.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pfs_tls_options {
  const char* ca;           /* Current_tls_ca */
  const char* capath;       /* Current_tls_capath */
  const char* cert;         /* Current_tls_cert */
  const char* key;          /* Current_tls_key */
  const char* crl;          /* Current_tls_crl */
  const char* crlpath;      /* Current_tls_crlpath */
  const char* cipher;       /* Current_tls_cipher (NULL: the context's TLS 1.2 and older ciphers) */
  const char* ciphersuites; /* Current_tls_ciphersuites (NULL: the context's TLS 1.3 suites) */
  const char* version;      /* Current_tls_version (NULL: from the context's min and max) */
} pfs_tls_options;

/* The number of properties shown (0 when channel or ctx is NULL). */
int pfs_tls_channel_fill_from_ssl_ctx(pfs_tls_channel* channel, SSL_CTX* ctx, const pfs_tls_options* given);

#ifdef __cplusplus
}
#endif

#endif /* PFS_TLS_OPENSSL_H */

// TLS channels: the cost of rewriting a property's value (pfs_tls_channel_set of a
// property already shown: the registry mutex, a lookup among the channel's
// properties, the value copied under its seqlock), for a counter's few bytes and
// for a value of 1,000 bytes (a cipher list).
#include <benchmark/benchmark.h>

#include <string>

#include "agent/provider/pfs_tls.h"
#include "bench_agent.h"

namespace {

void BM_TlsSetCounter(benchmark::State& state) {
  pfs::bench::start_agent();
  pfs::tls_channel c{"bench"};
  for (const char* p :
       {"Ssl_accept_renegotiates", "Ssl_accepts", "Ssl_callback_cache_hits", "Ssl_client_connects",
        "Ssl_connect_renegotiates", "Ssl_ctx_verify_depth", "Ssl_ctx_verify_mode"})
    c.set(p, "0");
  for (auto _ : state) c.set("Ssl_ctx_verify_mode", "12345");  // the last of 7 properties
}

void BM_TlsSetLong(benchmark::State& state) {
  pfs::bench::start_agent();
  pfs::tls_channel c{"bench_long"};
  const std::string value(1000, 'x');
  c.set("Current_tls_cipher", value);
  for (auto _ : state) c.set("Current_tls_cipher", value);
}

const bool registered = [] {
  benchmark::RegisterBenchmark("BM_Tls/set_counter", BM_TlsSetCounter);
  benchmark::RegisterBenchmark("BM_Tls/set_1000_bytes", BM_TlsSetLong);
  return true;
}();

}  // namespace

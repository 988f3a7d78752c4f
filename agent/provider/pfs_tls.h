// TLS channels for C++ (MySQL's psi_tls_channel.h): a TLS context the program
// names, and its properties with their current values, shown one row each in
// tls_channel_status while the channel lives.
//
//   pfs::tls_channel main_channel{"mysql_main"};
//   main_channel.set("Current_tls_version", "TLSv1.2,TLSv1.3");
//   main_channel.set("Ssl_accepts", std::to_string(accepts));  // rewrites the row
//   // the rows go when main_channel is destroyed
//
// Sits on the C ABI (pfs_c.h: pfs_register_tls_channel, pfs_tls_channel_set,
// pfs_unregister_tls_channel), so it compiles to nothing under
// PFS_NO_INSTRUMENTATION. Calls on one channel are made one at a time.
#pragma once

#include <string>

#include "agent/provider/pfs_c.h"

namespace pfs {

class tls_channel {
 public:
  // Registers the channel (the first registration starts the agent from
  // PFS_REGION, as any does); a channel that could not be registered shows nothing.
  explicit tls_channel(const char* name) : handle_(pfs_register_tls_channel(name)) {}
  ~tls_channel() { pfs_unregister_tls_channel(handle_); }
  tls_channel(const tls_channel&) = delete;
  tls_channel& operator=(const tls_channel&) = delete;

  // Sets a property's value (its row is added on the first set); false when it is
  // not shown (see pfs_tls_channel_set).
  bool set(const char* property, const char* value) {
    return pfs_tls_channel_set(handle_, property, value) != 0;
  }
  bool set(const char* property, const std::string& value) { return set(property, value.c_str()); }

  bool registered() const { return handle_ != nullptr; }
  // For the C ABI's helpers (pfs_tls_channel_fill_from_ssl_ctx).
  pfs_tls_channel* handle() const { return handle_; }

 private:
  pfs_tls_channel* handle_;
};

}  // namespace pfs

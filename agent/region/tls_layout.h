// TLS channels (layout 6): the rows of tls_channel_status, as MySQL 8.0's TLS
// channel instrumentation (psi_tls_channel.h) shows them: one row per (channel,
// property) with the property's current value.
//
// The program registers a channel (a TLS context it names) and sets its
// properties; each (channel, property) pair takes one record, kept while the
// channel is registered. The record's lock word covers channel and property
// (written while dirty); the value changes while the record is allocated, under
// value_seq (odd while rewritten; one writer at a time, the program serialises
// the updates of a channel).
#pragma once

#include <cstdint>
#include <type_traits>

#include "agent/region/region_layout.h"

namespace pfs::layout {

inline constexpr std::size_t kTlsChannelLen = 128;   // CHANNEL varchar(128)
inline constexpr std::size_t kTlsPropertyLen = 128;  // PROPERTY varchar(128)
inline constexpr std::size_t kTlsValueLen = 1024;    // VALUE (MySQL's varchar(2048), cut here)

struct tls_property_record {
  std::uint32_t lock;        // version+state
  std::uint32_t value_seq;   // seqlock of value
  std::uint64_t channel_id;  // the registration this row belongs to (process-unique, from 1)
  char channel[kTlsChannelLen];
  char property[kTlsPropertyLen];
  char value[kTlsValueLen];
};

static_assert(sizeof(tls_property_record) == 16 + kTlsChannelLen + kTlsPropertyLen + kTlsValueLen);
static_assert(std::is_trivially_copyable_v<tls_property_record>);

}  // namespace pfs::layout

// TLS channels (MySQL 8.0's psi_tls_channel.h: register_tls_channel,
// unregister_tls_channel; performance_schema.tls_channel_status). MySQL's table
// asks each channel's property iterator for the current values when it is read;
// here the reader is another process, so the program writes each (channel,
// property) pair into a record of kArrayTlsProperties and rewrites its value
// there when it changes.
//
// A record is taken (free -> dirty -> allocated, under the registry mutex, which
// the fork handlers also hold) the first time a property of a channel is set; a
// later set rewrites the value alone under the record's value_seq (odd while
// written), so a reader never sees half of one value and half of another. A
// channel's records are taken in increasing slot order while there is room after
// its last one, so its rows read in the order its properties were first set.
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/pfs_c.h"
#include "agent/region/tls_layout.h"

// The handle the program holds: which records are its properties. Process-local.
struct pfs_tls_channel {
  std::uint64_t id = 0;
  std::uint64_t generation = 0;  // the agent it was registered with
  char name[pfs::layout::kTlsChannelLen] = {};
  struct property {
    std::string name;
    std::uint32_t slot;
  };
  std::vector<property> properties;
};

namespace pfs::detail {
namespace {

struct tls_state {
  tls_property_record* records = nullptr;
  std::uint32_t max_records = 0;
  std::uint64_t generation = 0;  // bumped by each start: a handle of an earlier agent writes nothing
  std::uint64_t next_channel_id = 1;
};
constinit tls_state g_tls;

// Whether a handle belongs to the running agent (call under the registry mutex).
bool current(const pfs_tls_channel* c) {
  return g_tls.records != nullptr && c->generation == g_tls.generation;
}

// The value's bytes and its NUL (cut at kTlsValueLen - 1 bytes); what lies past the
// NUL is left as it was: readers stop at the first NUL.
void copy_value(tls_property_record& r, const char* value) {
  const std::size_t n = strnlen(value, kTlsValueLen - 1);
  for (std::size_t i = 0; i < n; ++i) store_relaxed(r.value[i], value[i]);
  store_relaxed(r.value[n], '\0');
}

void write_value(tls_property_record& r, const char* value) {
  const std::uint32_t seq = load_relaxed(r.value_seq) | 1u;
  store_relaxed(r.value_seq, seq);
  std::atomic_thread_fence(std::memory_order_release);
  copy_value(r, value);
  store_release(r.value_seq, seq + 1);
}

// A free record, the first after `after` if there is one, else the first; the
// record is left dirty. kNoSlot when every record is taken.
constexpr std::uint32_t kNoSlot = ~0u;
std::uint32_t take_slot(std::uint32_t after) {
  for (int pass = 0; pass < 2; ++pass) {
    const std::uint32_t from = pass == 0 ? after : 0;
    for (std::uint32_t i = from; i < g_tls.max_records; ++i) {
      tls_property_record& r = g_tls.records[i];
      const std::uint32_t word = load_relaxed(r.lock);
      if ((word & kStateMask) != kStateFree) continue;
      store_relaxed(r.lock, (word & ~kStateMask) | kStateDirty);
      std::atomic_thread_fence(std::memory_order_release);
      return i;
    }
    if (after == 0) break;
  }
  return kNoSlot;
}

void free_slot(std::uint32_t slot) {
  tls_property_record& r = g_tls.records[slot];
  const std::uint32_t word = load_relaxed(r.lock);
  store_relaxed(r.lock, (word & ~kStateMask) | kStateDirty);
  std::atomic_thread_fence(std::memory_order_release);
  store_relaxed(r.channel_id, std::uint64_t{0});
  store_release(r.lock, ((word & ~kStateMask) + kVersionInc) | kStateFree);
}

}  // namespace

void init_tls(agent_state& a) {
  g_tls.records = a.region.array<tls_property_record>(kArrayTlsProperties);
  g_tls.max_records = g_tls.records == nullptr ? 0 : a.region.header().max_tls_properties;
  ++g_tls.generation;
}

}  // namespace pfs::detail

using namespace pfs::detail;

extern "C" {

pfs_tls_channel* pfs_register_tls_channel(const char* name) {
  if (g_agent == nullptr) pfs_init_from_env();  // as the other registrations: PFS_REGION starts it
  agent_state* a = g_agent;
  if (a == nullptr || name == nullptr || *name == '\0' || strnlen(name, kTlsChannelLen) >= kTlsChannelLen)
    return nullptr;
  auto* c = new (std::nothrow) pfs_tls_channel;
  if (c == nullptr) return nullptr;
  std::memcpy(c->name, name, std::strlen(name) + 1);
  std::lock_guard<std::mutex> guard(a->registry_mutex);
  c->generation = g_tls.generation;
  c->id = g_tls.next_channel_id++;
  return c;
}

int pfs_tls_channel_set(pfs_tls_channel* c, const char* property, const char* value) {
  agent_state* a = g_agent;
  if (a == nullptr || c == nullptr || property == nullptr || *property == '\0' ||
      strnlen(property, kTlsPropertyLen) >= kTlsPropertyLen)
    return 0;
  if (value == nullptr) value = "";
  std::lock_guard<std::mutex> guard(a->registry_mutex);
  if (!current(c) || !region_attached()) return 0;
  for (const auto& p : c->properties) {
    if (p.name != property) continue;
    write_value(g_tls.records[p.slot], value);
    return 1;
  }
  try {
    c->properties.reserve(c->properties.size() + 1);  // before a record is taken: no leak on bad_alloc
  } catch (...) {
    return 0;
  }
  const std::uint32_t after = c->properties.empty() ? 0 : c->properties.back().slot + 1;
  const std::uint32_t slot = take_slot(after);
  if (slot == kNoSlot) {
    bump_lost(kLostTlsProperties);
    return 0;
  }
  tls_property_record& r = g_tls.records[slot];
  store_relaxed(r.channel_id, c->id);
  copy_field(r.channel, kTlsChannelLen, c->name);
  copy_field(r.property, kTlsPropertyLen, property);
  store_relaxed(r.value_seq, load_relaxed(r.value_seq) & ~1u);
  copy_value(r, value);
  store_release(r.lock, ((load_relaxed(r.lock) & ~kStateMask) + kVersionInc) | kStateAllocated);
  try {
    c->properties.push_back({property, slot});
  } catch (...) {
    free_slot(slot);  // the handle could not remember it: not shown
    return 0;
  }
  return 1;
}

void pfs_unregister_tls_channel(pfs_tls_channel* c) {
  if (c == nullptr) return;
  if (agent_state* a = g_agent) {
    std::lock_guard<std::mutex> guard(a->registry_mutex);
    if (current(c))
      for (const auto& p : c->properties) free_slot(p.slot);
  }
  delete c;
}

}  // extern "C"

// Plugin unload (MySQL's PSI system service: unload_plugin). A plugin names its
// instruments with its own category (wait/synch/mutex/<plugin>/...), so its
// classes are those whose category is the plugin's name. When the program is about
// to unload it, the instances of those classes that the plugin did not destroy
// leave their tables: nothing would ever destroy them, and their identities point
// into memory about to go away. The classes stay: their names are copies in the
// region, and a plugin loaded again registers the same names, so it reuses them
// and its summaries go on.
//
// Call sites are interned by the address of their file name (cold_path.cpp); a
// library loaded later may put another file name at the same address, so every
// source record's key is cleared and call sites are interned again at their next
// event (the texts already shown stay; PFS_MAX_SOURCES bounds the repeats). A
// thread's one-entry cache (thread_context::last_file) still matches only the same
// address and line, in practice the same plugin loaded again: the same text.
#include <cstring>
#include <mutex>
#include <vector>

#include "agent/provider/internal/agent_internal.h"

namespace pfs::detail {
namespace {

// The classes of the plugin: "<prefix><plugin>/..." for every kind with a category.
std::vector<bool> classes_of(const agent_state& a, const char* plugin) {
  std::vector<bool> out(a.max_classes, false);
  const std::size_t len = std::strlen(plugin);
  for (std::uint32_t i = 0; i < a.max_classes; ++i) {
    const class_record& c = a.classes[i];
    if ((load_acquire(c.lock) & kStateMask) != kStateAllocated) break;  // classes are never freed
    const char* prefix = class_prefix(static_cast<instrument_kind>(c.kind));
    const std::size_t plen = std::strlen(prefix);
    if (plen == 0) continue;  // transaction, idle, error: no category
    out[i] = std::strncmp(c.name, prefix, plen) == 0 && std::strncmp(c.name + plen, plugin, len) == 0 &&
             c.name[plen + len] == '/';
  }
  return out;
}

std::uint32_t unload_sync(agent_state& a, array_id id, const std::vector<bool>& plugin_class) {
  auto* instances = a.region.array<sync_instance>(id);
  std::uint32_t n = 0;
  for (std::uint64_t i = 0; instances != nullptr && i < a.region.count(id); ++i) {
    sync_instance& s = instances[i];
    const std::uint32_t key = load_relaxed(s.class_index);
    if ((load_acquire(s.lock) & kStateMask) != kStateAllocated || key < 1 || key > plugin_class.size() ||
        !plugin_class[key - 1])
      continue;
    destroy_instance(&s);
    ++n;
  }
  return n;
}

void forget_source_keys(agent_state& a) {
  for (std::uint32_t i = 0; i < a.source_count; ++i)
    if (load_acquire(a.sources[i].state) == kSourceReady) store_relaxed(a.sources[i].key, std::uint64_t{0});
  if (thread_context* t = tls_context; t != nullptr) t->last_file = nullptr;
}

}  // namespace

unsigned unload_plugin(const char* plugin) {
  agent_state* a = g_agent;
  if (a == nullptr || plugin == nullptr || *plugin == '\0' || std::strchr(plugin, '/') != nullptr ||
      std::strlen(plugin) >= kNameLen)
    return 0;
  std::lock_guard<std::mutex> guard(a->registry_mutex);
  const std::vector<bool> plugin_class = classes_of(*a, plugin);
  std::uint32_t n = unload_sync(*a, kArrayMutexes, plugin_class) +
                    unload_sync(*a, kArrayRwlocks, plugin_class) +
                    unload_sync(*a, kArrayConds, plugin_class) + unload_sync(*a, kArraySems, plugin_class);
  n += unload_files(plugin_class) + unload_sockets(plugin_class) + unload_tables(plugin_class);
  forget_source_keys(*a);
  return n;
}

}  // namespace pfs::detail

namespace pfs {
unsigned unload_plugin(const char* plugin_name) { return detail::unload_plugin(plugin_name); }
}  // namespace pfs

extern "C" unsigned pfs_unload_plugin(const char* plugin_name) {
  return pfs::detail::unload_plugin(plugin_name);
}

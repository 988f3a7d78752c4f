// File and table registries (name -> instance, fd -> instance, table shares) and
// the C ABI of file io and table io waits.
//
// The file name registry takes a process-local mutex for the hash lookup of
// create/open/stat/delete/rename: those are system calls that cost microseconds,
// and the mutex is never held across the real call. Reads, writes and every
// other descriptor operation find their file through the fd map with one
// atomic load, lock-free.
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/io_path.h"
#include "agent/region/io_layout.h"
#include "agent/region/setup.h"
#include "agent/region/wide_sum.h"

namespace pfs::detail {

io_hot_state g_io;

namespace {

static_assert(PFS_FILE_CREATE == kOpFileCreate && PFS_FILE_SYNC == kOpFileSync);
static_assert(PFS_TABLE_FETCH == kOpTableFetch && PFS_TABLE_DELETE == kOpTableDelete);
static_assert(PFS_TABLE_LOCK_READ_NORMAL == kTableLockRead &&
              PFS_TABLE_LOCK_WRITE_NORMAL == kTableLockWrite &&
              PFS_TABLE_LOCK_WRITE_EXTERNAL == kTableLockWriteExternal && kTableLockKinds == 10);

wait_locker& as_locker(pfs_wait_locker* l) { return *reinterpret_cast<wait_locker*>(l); }

// Open addressing over file instance indexes (1-based; 0 empty, kTombstone
// deleted), sized at init to twice the file array: no allocation afterwards.
constexpr std::uint32_t kTombstone = UINT32_MAX;
struct file_registry {
  std::mutex& mutex = fork_locked().files;
  std::vector<std::uint32_t> slots;
  std::vector<std::uint32_t> fd_map;
  std::mutex& table_mutex = fork_locked().tables;  // table declarations (rare)
};
file_registry* g_files = nullptr;

std::uint64_t name_hash(const char* name) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (const char* p = name; *p != '\0'; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  return h;
}

bool same_name(const file_instance& f, const char* name) {
  return std::strncmp(f.name, name, kObjectNameLen) == 0;
}

void write_name(char* field, std::size_t cap, const char* value) {
  std::size_t n = std::strlen(value);
  if (n >= cap) n = cap - 1;
  for (std::size_t i = 0; i < cap; ++i) store_relaxed(field[i], i < n ? value[i] : '\0');
}

// Under g_files->mutex. Returns the slot holding the name, or the slot where it
// would go (first tombstone or empty); found tells which.
std::uint32_t* find_slot(const char* name, bool& found) {
  auto& slots = g_files->slots;
  const std::size_t n = slots.size();
  std::uint32_t* insert_at = nullptr;
  found = false;
  for (std::size_t probe = 0, i = name_hash(name) % n; probe < n; ++probe, i = (i + 1) % n) {
    std::uint32_t& s = slots[i];
    if (s == 0) return insert_at != nullptr ? insert_at : &s;
    if (s == kTombstone) {
      if (insert_at == nullptr) insert_at = &s;
      continue;
    }
    if (same_name(g_io.files[s - 1], name)) {
      found = true;
      return &s;
    }
  }
  return insert_at;
}

// Under g_files->mutex: the file instance for a name, created if needed.
file_instance* find_or_create_file(pfs_key key, const char* name, bool& created) {
  created = false;
  if (!region_attached() || g_files == nullptr || g_io.file_count == 0 || name == nullptr || *name == '\0')
    return nullptr;
  bool found = false;
  std::uint32_t* slot = find_slot(name, found);
  if (found) return &g_io.files[*slot - 1];
  if (slot == nullptr || key == 0) return nullptr;
  for (std::uint32_t i = 0; i < g_io.file_count; ++i) {
    file_instance& f = g_io.files[i];
    std::uint32_t word = load_relaxed(f.lock);
    if ((word & kStateMask) != kStateFree) continue;
    store_relaxed(f.lock, (word & ~kStateMask) | kStateDirty);
    std::atomic_thread_fence(std::memory_order_release);
    store_relaxed(f.class_index, key);
    store_relaxed(f.open_count, 0u);
    store_relaxed(f.identity, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&f)));
    reset_io(f.stats.read);
    reset_io(f.stats.write);
    reset_io(f.stats.misc);
    zero_stat(g_io.file_waits[i]);
    write_name(f.name, kObjectNameLen, name);
    store_release(f.lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
    *slot = i + 1;
    created = true;
    return &f;
  }
  bump_lost(kLostFileInstances);
  return nullptr;
}

// Under g_files->mutex: a deleted file leaves file_instances; its statistics go
// to its class's bucket. The record keeps name and version until reused.
void remove_file(file_instance* f) {
  bool found = false;
  std::uint32_t* slot = find_slot(f->name, found);
  if (found) *slot = kTombstone;
  const std::uint32_t key = load_relaxed(f->class_index);
  auto* buckets = g_agent->region.array<io_stats>(kArrayClassIo);
  if (buckets != nullptr && key >= 1 && key <= g_agent->max_classes) {
    fold_io(buckets[key - 1].read, f->stats.read);
    fold_io(buckets[key - 1].write, f->stats.write);
    fold_io(buckets[key - 1].misc, f->stats.misc);
  }
  const std::uint32_t word = load_relaxed(f->lock);
  store_release(f->lock, (word & ~kStateMask) | kStateFree);
}

// The lock class of table io class io_key: wait/io/table/<category>/handler gives
// wait/lock/table/<category>/handler (registered if needed); 0 if it cannot be.
pfs_key table_lock_class_of(agent_state& a, pfs_key io_key) {
  constexpr std::string_view kPrefix = "wait/io/table/", kSuffix = "/handler";
  const std::string_view name(a.classes[io_key - 1].name);
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix))
    return 0;
  const std::string category(name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size()));
  return register_class(kKindTableLock, category.c_str(), "handler");
}

void bind_fd(int fd, file_instance* f) {
  if (fd < 0) return;
  if (static_cast<std::uint32_t>(fd) >= g_io.fd_map_size) {
    bump_lost(kLostFileHandles);
    return;
  }
  store_relaxed(g_io.fd_map[fd], static_cast<std::uint32_t>(f - g_io.files) + 1);
}

void unbind_fd(int fd) {
  if (fd >= 0 && static_cast<std::uint32_t>(fd) < g_io.fd_map_size) store_relaxed(g_io.fd_map[fd], 0u);
}

}  // namespace

void lock_io_registries(bool lock) {
  if (g_files == nullptr) return;
  if (lock) {
    g_files->mutex.lock();
    g_files->table_mutex.lock();
  } else {
    g_files->table_mutex.unlock();
    g_files->mutex.unlock();
  }
}

namespace {
bool of_plugin(const std::vector<bool>& plugin_class, std::uint32_t key) {
  return key >= 1 && key <= plugin_class.size() && plugin_class[key - 1];
}
}  // namespace

// A plugin's files leave file_instances as a deleted file does (statistics into
// the class's bucket); descriptors still bound to them are forgotten, so io on
// them afterwards is not recorded into a record that was reused.
std::uint32_t unload_files(const std::vector<bool>& plugin_class) {
  if (g_files == nullptr) return 0;
  std::lock_guard<std::mutex> guard(g_files->mutex);
  std::uint32_t n = 0;
  for (std::uint32_t i = 0; i < g_io.file_count; ++i) {
    file_instance& f = g_io.files[i];
    if ((load_relaxed(f.lock) & kStateMask) != kStateAllocated || !of_plugin(plugin_class, f.class_index))
      continue;
    for (std::uint32_t fd = 0; fd < g_io.fd_map_size; ++fd)
      if (load_relaxed(g_io.fd_map[fd]) == i + 1) store_relaxed(g_io.fd_map[fd], 0u);
    remove_file(&f);
    ++n;
  }
  return n;
}

// A plugin's tables are dropped (pfs_drop_table).
std::uint32_t unload_tables(const std::vector<bool>& plugin_class) {
  if (g_files == nullptr) return 0;
  std::uint32_t n = 0;
  for (std::uint32_t i = 0; i < g_io.table_count; ++i) {
    table_share& t = g_io.tables[i];
    if ((load_relaxed(t.lock) & kStateMask) != kStateAllocated || !of_plugin(plugin_class, t.class_index))
      continue;
    pfs_drop_table(reinterpret_cast<pfs_table*>(&t));
    ++n;
  }
  return n;
}

void duplicate_file_fd(int from, int to) {
  if (g_files == nullptr || from == to) return;
  std::lock_guard<std::mutex> guard(g_files->mutex);
  file_instance* f = file_of_fd(from);
  unbind_fd(to);  // dup2 and dup3 closed what the number was
  if (f == nullptr || (load_relaxed(f->lock) & kStateMask) != kStateAllocated) return;
  __atomic_fetch_add(&f->open_count, 1u, __ATOMIC_RELAXED);
  bind_fd(to, f);
}

void bind_inherited_file(pfs_key key, int fd, const char* name) {
  if (g_agent == nullptr || g_files == nullptr || key == 0 || key > g_agent->max_classes ||
      load_relaxed(g_hot.classes[key - 1].kind) != kKindFile)
    return;
  std::lock_guard<std::mutex> guard(g_files->mutex);
  bool created = false;
  file_instance* f = find_or_create_file(key, name, created);
  if (f == nullptr) return;
  __atomic_fetch_add(&f->open_count, 1u, __ATOMIC_RELAXED);
  bind_fd(fd, f);
}

void init_io(agent_state& a, const region_sizes& sizes) {
  g_files = new file_registry;  // lives as long as the process: objects may outlive shutdown
  g_files->slots.assign(std::size_t{a.region.count(kArrayFiles)} * 2 + 1, 0);
  g_files->fd_map.assign(sizes.max_file_handles, 0);
  g_io.files = a.region.array<file_instance>(kArrayFiles);
  g_io.file_count = static_cast<std::uint32_t>(a.region.count(kArrayFiles));
  g_io.file_waits = a.region.array<wait_stat>(kArrayFileWaitStats);
  g_io.fd_map = g_files->fd_map.data();
  g_io.fd_map_size = static_cast<std::uint32_t>(g_files->fd_map.size());
  g_io.tables = a.region.array<table_share>(kArrayTables);
  g_io.table_count = static_cast<std::uint32_t>(a.region.count(kArrayTables));
  g_io.indexes = a.region.array<index_stat>(kArrayTableIndexes);
  g_io.indexes_per_table = a.header->max_indexes_per_table;
  if (a.region.count(kArrayTableLockStats) == g_io.table_count)
    g_io.table_locks = a.region.array<table_lock_stat>(kArrayTableLockStats);
  if (auto* buckets = a.region.array<io_stats>(kArrayClassIo)) {
    for (std::uint64_t i = 0; i < a.region.count(kArrayClassIo); ++i) {
      reset_io(buckets[i].read);
      reset_io(buckets[i].write);
      reset_io(buckets[i].misc);
    }
  }
}

}  // namespace pfs::detail

using namespace pfs;
using namespace pfs::detail;

extern "C" {

pfs_key pfs_register_file(const char* category, const char* name) {
  if (g_agent == nullptr) pfs_init_from_env();
  return register_class(kKindFile, category, name);
}

int pfs_start_file_name_wait(pfs_wait_locker* locker, pfs_key key, int op, const char* path, const char* file,
                             unsigned line) {
  if (g_agent == nullptr || g_files == nullptr || !load_relaxed(g_hot.recording) || key == 0 ||
      key > g_agent->max_classes || load_relaxed(g_hot.classes[key - 1].kind) != kKindFile)
    return 0;
  if ((load_relaxed(g_hot.classes[key - 1].derived) & kFlagEnabled) == 0) return 0;
  file_instance* f = nullptr;
  bool created = false;
  {
    std::lock_guard<std::mutex> guard(g_files->mutex);
    f = find_or_create_file(key, path, created);
  }
  wait_locker& l = as_locker(locker);
  if (!begin_file_wait(l, f, op)) return 0;
  // A failed open of a missing file must not leave a file_instances row behind.
  l.created = created ? 1 : 0;
  start_running(l, file, line);
  return 1;
}

void pfs_end_file_open_wait(pfs_wait_locker* locker, int fd) {
  wait_locker& l = as_locker(locker);
  auto* f = static_cast<file_instance*>(l.object);
  end_file_wait(l, -1);
  std::lock_guard<std::mutex> guard(g_files->mutex);
  if (fd >= 0) {
    __atomic_fetch_add(&f->open_count, 1u, __ATOMIC_RELAXED);
    bind_fd(fd, f);
  } else if (l.created && load_relaxed(f->open_count) == 0) {
    remove_file(f);
  }
}

void pfs_end_file_name_wait(pfs_wait_locker* locker, int rc, const char* new_path) {
  wait_locker& l = as_locker(locker);
  auto* f = static_cast<file_instance*>(l.object);
  const int op = l.event.operation;
  end_file_wait(l, -1);
  std::lock_guard<std::mutex> guard(g_files->mutex);
  if (rc == 0 && op == kOpFileDelete) {
    remove_file(f);
  } else if (rc == 0 && op == kOpFileRename && new_path != nullptr) {
    // The file keeps its statistics under its new name; a file that had that
    // name is replaced, as on disk.
    bool found = false;
    std::uint32_t* old_slot = find_slot(f->name, found);
    if (found) *old_slot = kTombstone;
    std::uint32_t* target = find_slot(new_path, found);
    if (found && &g_io.files[*target - 1] != f) {
      remove_file(&g_io.files[*target - 1]);
      target = find_slot(new_path, found);
    }
    // The file keeps its identity (older events still name it, now by its new
    // name); only the name changes, under its own seqlock.
    const std::uint32_t seq = load_relaxed(f->name_seq) | 1u;
    store_relaxed(f->name_seq, seq);
    std::atomic_thread_fence(std::memory_order_release);
    write_name(f->name, kObjectNameLen, new_path);
    store_release(f->name_seq, seq + 1);
    if (target != nullptr) *target = static_cast<std::uint32_t>(f - g_io.files) + 1;
  } else if (l.created && load_relaxed(f->open_count) == 0) {
    remove_file(f);  // a stat or delete of a file that did not exist
  }
}

int pfs_start_file_wait(pfs_wait_locker* locker, int fd, int op, const char* file, unsigned line) {
  wait_locker& l = as_locker(locker);
  if (!begin_file_wait(l, file_of_fd(fd), op)) return 0;
  start_running(l, file, line);
  return 1;
}

void pfs_end_file_wait(pfs_wait_locker* locker, int64_t bytes) { end_file_wait(as_locker(locker), bytes); }

void pfs_end_file_close_wait(pfs_wait_locker* locker, int fd) {
  wait_locker& l = as_locker(locker);
  auto* f = static_cast<file_instance*>(l.object);
  end_file_wait(l, -1);
  unbind_fd(fd);
  std::uint32_t n = load_relaxed(f->open_count);
  while (n > 0 &&
         !__atomic_compare_exchange_n(&f->open_count, &n, n - 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

void pfs_forget_fd(int fd) {
  if (g_agent != nullptr) unbind_fd(fd);
}

pfs_key pfs_register_table_io(const char* category) {
  if (g_agent == nullptr) pfs_init_from_env();
  const pfs_key io = register_class(kKindTable, category, "handler");
  // Its lock waits' class, wait/lock/table/<category>/handler, listed from now on
  // in setup_instruments as MySQL lists wait/lock/table/sql/handler.
  if (io != 0) register_class(kKindTableLock, category, "handler");
  return io;
}

pfs_table* pfs_declare_table(pfs_key key, int object_type, const char* schema, const char* name) {
  agent_state* a = g_agent;
  if (a == nullptr || g_files == nullptr || key == 0 || key > a->max_classes ||
      a->classes[key - 1].kind != kKindTable || schema == nullptr || name == nullptr ||
      std::strlen(schema) >= kObjectSchemaLen || std::strlen(name) >= kTableNameLen ||
      (object_type != PFS_OBJECT_TABLE && object_type != PFS_OBJECT_TEMPORARY_TABLE))
    return nullptr;
  const pfs_key lock_key = table_lock_class_of(*a, key);  // before the table mutex: it registers
  std::lock_guard<std::mutex> guard(g_files->table_mutex);
  table_share* free_slot = nullptr;
  for (std::uint32_t i = 0; i < g_io.table_count; ++i) {
    table_share& t = g_io.tables[i];
    const std::uint32_t state = load_relaxed(t.lock) & kStateMask;
    if (state == kStateFree) {
      if (free_slot == nullptr) free_slot = &t;
      continue;
    }
    if (state == kStateAllocated && t.object_type == object_type && std::strcmp(t.schema, schema) == 0 &&
        std::strcmp(t.name, name) == 0)
      return reinterpret_cast<pfs_table*>(&t);
  }
  if (free_slot == nullptr) {
    bump_lost(kLostTableInstances);
    return nullptr;
  }
  table_share& t = *free_slot;
  const std::uint32_t word = load_relaxed(t.lock);
  store_relaxed(t.lock, (word & ~kStateMask) | kStateDirty);
  std::atomic_thread_fence(std::memory_order_release);
  store_relaxed(t.class_index, key);
  store_relaxed(t.object_type, static_cast<std::uint8_t>(object_type));
  store_relaxed(t.index_count, 0u);
  store_relaxed(t.identity, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&t)));
  std::memset(&t.no_index, 0, sizeof(t.no_index));
  for (wait_stat* s : {&t.no_index.fetch, &t.no_index.insert, &t.no_index.update, &t.no_index.del})
    store_relaxed(s->min, UINT64_MAX);
  write_name(t.schema, kObjectSchemaLen, schema);
  write_name(t.name, kTableNameLen, name);
  // A reused share starts with no lock waits, as with no io (MySQL resets both).
  if (g_io.table_locks != nullptr) {
    table_lock_stat& locks = g_io.table_locks[free_slot - g_io.tables];
    store_relaxed(locks.class_index, lock_key);
    for (wait_stat& s : locks.kinds) zero_stat(s);
  }
  {
    setup_lock_guard setup(a->region);
    store_relaxed(t.derived, setup::table_derived(a->region, schema, name));
  }
  store_release(t.lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
  return reinterpret_cast<pfs_table*>(&t);
}

unsigned pfs_declare_table_index(pfs_table* table, const char* index_name) {
  auto* t = reinterpret_cast<table_share*>(table);
  if (t == nullptr || index_name == nullptr || *index_name == '\0' ||
      std::strlen(index_name) >= kIndexNameLen)
    return 0;
  std::lock_guard<std::mutex> guard(g_files->table_mutex);
  const std::uint64_t base = static_cast<std::uint64_t>(t - g_io.tables) * g_io.indexes_per_table;
  const std::uint32_t n = load_relaxed(t->index_count);
  for (std::uint32_t i = 0; i < n; ++i)
    if (std::strcmp(g_io.indexes[base + i].name, index_name) == 0) return i + 1;
  if (n >= g_io.indexes_per_table) {
    bump_lost(kLostIndexStats);
    return 0;
  }
  index_stat& ix = g_io.indexes[base + n];
  std::memset(&ix.stat, 0, sizeof(ix.stat));
  for (wait_stat* s : {&ix.stat.fetch, &ix.stat.insert, &ix.stat.update, &ix.stat.del})
    store_relaxed(s->min, UINT64_MAX);
  write_name(ix.name, kIndexNameLen, index_name);
  store_release(t->index_count, n + 1);  // readers see the name before the count
  return n + 1;
}

void pfs_drop_table(pfs_table* table) {
  auto* t = reinterpret_cast<table_share*>(table);
  if (t == nullptr || g_files == nullptr) return;
  std::lock_guard<std::mutex> guard(g_files->table_mutex);
  const std::uint32_t word = load_relaxed(t->lock);
  store_release(t->lock, (word & ~kStateMask) | kStateFree);
}

int pfs_start_table_io_wait(pfs_wait_locker* locker, pfs_table* table, int op, unsigned index, unsigned flags,
                            const char* file, unsigned line) {
  wait_locker& l = as_locker(locker);
  if (!begin_table_wait(l, reinterpret_cast<table_share*>(table), op, index, flags)) return 0;
  reset_wait_frame(*l.thread);
  start_running(l, file, line);
  return 1;
}

void pfs_end_table_io_wait(pfs_wait_locker* locker, uint64_t rows) {
  end_table_wait(as_locker(locker), rows);
}

int pfs_start_table_lock_wait(pfs_wait_locker* locker, pfs_table* table, int lock_kind, const char* file,
                              unsigned line) {
  wait_locker& l = as_locker(locker);
  if (!begin_table_lock_wait(l, reinterpret_cast<table_share*>(table), lock_kind)) return 0;
  start_running(l, file, line);
  return 1;
}

void pfs_end_table_lock_wait(pfs_wait_locker* locker) { end_table_lock_wait(as_locker(locker)); }

}  // extern "C"

// The interposer's interface to the provider: what the LD_PRELOAD interposer
// (agent/preload) needs beyond the public headers (pfs.h, pfs_c.h and the inline
// event path): the inline io and memory paths its wrappers run, the out-of-line registration
// functions, the units of work its C ABI wraps (work_c_abi.inc), and the setters of
// the agent's hooks. Everything else of the provider's state stays in
// agent_internal.h, which the interposer does not include.
#pragma once

#include <pthread.h>

#include <cstdint>
#include <string>

#include "agent/provider/internal/memory_path.h"
#include "agent/provider/internal/socket_path.h"
#include "agent/provider/internal/work_api.h"
#include "agent/provider/pfs_c.h"
#include "agent/region/region_layout.h"

namespace pfs::detail {

// A class of the given kind named <kind prefix><category>/<name>; 0 when the agent is
// off, the name invalid or the class array full (counted as lost).
pfs_key register_class(layout::instrument_kind kind, const char* category, const char* name,
                       std::uint8_t traits = 0);
// The same with the full name given (transaction, idle).
// traits: class_record::traits (memory classes).
pfs_key register_named_class(layout::instrument_kind kind, const std::string& full_name,
                             std::uint8_t traits = 0);
// An instance of class key for the object at identity; nullptr when not recorded
// (counted as lost when the array is full).
layout::sync_instance* create_instance(layout::instrument_kind kind, pfs_key key, const void* identity);
void destroy_instance(layout::sync_instance* s);
// The interposer looked at descriptor fd: it is not recorded (not a socket, or a
// socket without a row); its io is not looked at again until it is closed.
void mark_untracked_fd(int fd);
// Descriptor to is a duplicate of from (dup, dup2, dup3): it is the
// same open file, so it is bound to from's file instance (its OPEN_COUNT one more);
// when from is not a file's, whatever to was bound to is forgotten.
void duplicate_file_fd(int from, int to);
// Descriptor fd was open when the program started (inherited: a shell's redirection,
// a parent's pipe to a file): bound to the file instance of name in class key (made
// if needed; OPEN_COUNT one more), with no wait: the program did not open it.
void bind_inherited_file(pfs_key key, int fd, const char* name);
// What the agent did in the child of a fork (agent_fork.cpp), for the interposer's
// PFS_PRELOAD_VERBOSE: recorded into its own region (PFS_REGION has %p), stopped
// because there is no %p (the region is the parent's), or stopped because its
// region could not be made (error: errno; reason: why it was refused, e.g. "it is
// a symbolic link", or nullptr).
enum class fork_outcome { not_recording, own_region, no_pattern, failed };
struct fork_report {
  fork_outcome outcome;
  int error;
  const char* path;    // the child's region path ("" if none)
  const char* reason;  // a static text, or nullptr
};
const fork_report& last_fork_report();

// PARENT_THREAD_ID across thread creation: spawn_trampoline_arg wraps a start
// routine and its argument with the parent's THREAD_ID (nullptr when out of
// memory); spawn_trampoline, as the new thread's start routine, records the parent
// and runs the routine. If the thread is not created, free_trampoline_arg.
void* spawn_trampoline_arg(void* (*start)(void*), void* arg, std::uint64_t parent_thread_id);
void* spawn_trampoline(void* trampoline_arg);
void free_trampoline_arg(void* trampoline_arg);

// pthread_create as the agent must call it for its own thread (the CYCLE watch): the
// interposer sets the real one, so that its interposed pthread_create does not take
// the agent's thread for one of the program's. Set before pfs::init; nullptr (the
// default) is pthread_create.
using thread_create_fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
void set_thread_create_hook(thread_create_fn create);
// The interposer's "the agent runs on this thread" flag, set around what the agent
// frees on a new thread before the program's code runs (the trampoline's argument,
// allocated while the parent was marked), so that its heap count leaves it out.
using agent_busy_fn = void (*)(bool busy);
void set_agent_busy_hook(agent_busy_fn hook);
// Marks the calling thread busy (on) or not through the hook, if one is set: the
// agent's own system calls in the fork child handler then pass the interposer by.
void mark_agent_busy(bool on);

// Writes "perfschema: <text>" as one line to stderr, unless PFS_QUIET=1
// (agent_report.cpp): start-up failures, ignored settings, a region that changed.
void report(const std::string& text);

}  // namespace pfs::detail

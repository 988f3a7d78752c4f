// Survives SIGBUS on region mappings: a region file truncated (or shrunk) by
// someone else while a process has it mapped makes every access past the new end
// of the file raise SIGBUS, which would kill an instrumented program or a
// PostgreSQL backend (and with it, through the postmaster, every backend).
//
// Mechanism (see docs/design.md, "A region file that changes under a mapping"):
// mappings are registered here; a SIGBUS whose address lies inside a registered
// mapping replaces that whole mapping, at the same address and with the same
// protection, by anonymous zero-filled memory (mmap MAP_FIXED, async-signal-safe
// on Linux), marks it lost and returns. The faulting instruction runs again and
// reads zeros. No longjmp: the code that was running (C++ frames, a PostgreSQL
// backend) simply continues on memory that can no longer fault, and the caller
// checks lost() afterwards and reports "region file changed while it was read".
// Zeros are a valid picture to every reader (free records, disabled instruments)
// and to the provider's event path (every class disabled: recording stops).
//
// A SIGBUS elsewhere goes to the handler that was installed before ours (or to the
// default action, which ends the process as it would have without us).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pfs::fault_guard {

// The most mappings one process can register: a PostgreSQL backend reading a
// directory of regions maps each (twice when it writes their setup). 40 bytes a slot
// (640 KiB of zeros in the program's bss, untouched until used); the handler looks
// through them only on a SIGBUS.
inline constexpr int kMaxMappings = 16384;

// Registers a mapping [base, base + size) mapped with protection prot (PROT_*).
// Returns its slot, or -1 when the table (kMaxMappings) is full: such a mapping is
// not protected, and region_map::open refuses it. Thread-safe.
int watch(void* base, std::size_t size, int prot) noexcept;
// Forgets a slot (before munmap). -1 is ignored.
void unwatch(int slot) noexcept;
// True once a fault replaced the slot's mapping by zeros (until rearm).
bool lost(int slot) noexcept;
// The slot's mapping is the file again (the provider mapped it back): not lost.
void rearm(int slot) noexcept;
// Faults survived since the process started (all slots).
std::uint64_t fault_count() noexcept;

// Installs the handler (chaining to the previous one) for the lifetime of the
// object; nests; the previous handler is restored when the last scope ends, unless
// someone replaced ours in the meantime. For readers: the FDW installs it only
// around the spans that touch a mapping.
class scope {
 public:
  scope() noexcept;
  ~scope();
  scope(const scope&) = delete;
  scope& operator=(const scope&) = delete;
};

// Installs the handler for good (the provider: its hot path touches the region at
// any moment). Idempotent. A program that installs its own SIGBUS handler later
// replaces ours; one installed earlier is chained to.
void install_permanently() noexcept;

}  // namespace pfs::fault_guard

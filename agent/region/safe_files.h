// Creating files in directories other users may write to (a region in /tmp, its
// forked children's regions, trace files) without being turned against the user
// who runs the agent: nothing is opened through a name someone else could have
// planted. Files are created with O_CREAT|O_EXCL|O_NOFOLLOW, relative to a
// directory descriptor opened with O_NOFOLLOW, under names nobody can predict, and
// put in place with renameat; the directory and an existing destination are
// checked first. System calls only, no allocation: the fork child handler uses it.
// Reasons are static lower-case texts ("it is a symbolic link").
#pragma once

#include <cstddef>

namespace pfs::safe_files {

// Splits path into its directory (written to dir, "." if none, "/" for the root)
// and its last component (returned, a pointer into path). nullptr if dir is too
// small or the last component is empty.
const char* split_path(const char* path, char* dir, std::size_t dir_cap);

// Opens a directory to create files in (O_DIRECTORY|O_NOFOLLOW): -1 with errno.
int open_directory(const char* dir);

// Why files should not be created in the directory: writable by other users
// without the sticky bit, or owned by a user other than root and the effective
// user. nullptr if it is safe (or allow_unsafe).
const char* unsafe_directory(int dir_fd, bool allow_unsafe);

// Why the existing entry name of the directory must not be replaced or written to:
// a symbolic link, not a regular file, or a hard link (more than one link) of a
// file of another user; with must_own also any file of another user or with more
// than one link (a file about to be truncated). nullptr if it is fine or absent.
const char* unsafe_destination(int dir_fd, const char* name, bool must_own = false);
// The same checks on a file already open (fstat).
const char* unsafe_open_file(int fd, bool must_own);

// Creates a new file "<base>.tmp.XXXXXXXX" in the directory (X: random letters and
// digits, retried while the name exists), O_RDWR or O_WRONLY by flags, mode 0600,
// close-on-exec; its name goes to out. -1 with errno if it could not.
int create_unique(int dir_fd, const char* base, int flags, char* out, std::size_t out_cap);

// True for the names create_unique makes, and for the ".tmp" copies of older
// agents: readers listing a directory leave them alone.
bool is_temporary_name(const char* name);

}  // namespace pfs::safe_files

// The one writer of every file attnbench writes (reports, caches, compare/report --output). A regular (or
// missing) target is replaced atomically: a private temporary file beside it (mkstemp: O_EXCL, mode 0600
// until the final mode is set), write, fsync, rename, fsync of the directory; a symbolic link to a regular
// file keeps pointing at it (its target is replaced). A target that is not a regular file (a pipe, a
// device, /dev/stdout) is written in place and never replaced. A read-only target is refused.
#pragma once
#include <string>

namespace ab {

// Checks up front that `path` can be written, so that a run fails before doing any work: not a directory,
// not a read-only file, not a dangling link, and a directory where a private file can be created.
// Throws UsageError "cannot write 'PATH': why".
void check_writable(const std::string& path);
// Writes `text` to `path` as above; throws UsageError "cannot write 'PATH': why", the target untouched.
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace ab

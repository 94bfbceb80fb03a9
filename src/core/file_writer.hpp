// The one writer of every file attnbench writes (reports, caches, compare/report --output). A regular (or
// missing) target is replaced atomically: a private temporary file in its directory (O_TMPFILE, anonymous
// until written, then linked as TARGET.tmp.HOST.PID.N; mkstemp's O_EXCL where the file system has no
// O_TMPFILE; mode 0600 until the final mode is set), write, fsync, rename, fsync of the directory. A
// temporary file of this host whose process is gone (killed mid-write) is removed by the next write to the
// same target; a symbolic link to a regular
// file keeps pointing at it (its target is replaced). A target that is not a regular file (a pipe, a
// device, /dev/stdout) is written in place and never replaced. A read-only target is refused.
#pragma once
#include <string>

namespace ab {

// Checks up front that `path` can be written, so that a run fails before doing any work: not a directory,
// not a read-only file, not a dangling link, and a directory where a private file can be created.
// Throws UsageError "cannot write 'PATH': why".
void check_writable(const std::string& path);
// A private named temporary file beside `target` (TARGET.tmp.HOST.PID.XXXXXX, O_EXCL, mode 0600), for a
// writer that must hold the file open (a journal); returns its descriptor and sets *name. Throws
// UsageError "cannot write 'PATH': why".
int create_temp_beside(const std::string& path, const std::string& target, std::string* name);
// Removes the temporary files beside `target` that a process of this host left when it died mid-write.
void remove_stale_temps(const std::string& target);
// Writes `text` to `path` as above; throws UsageError "cannot write 'PATH': why", the target untouched.
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace ab

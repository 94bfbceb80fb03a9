// An exclusive advisory lock (flock) on PATH.lock, held for the lifetime of the object: writers that
// re-read, merge and rewrite a shared file (the heuristic cache) take it so that concurrent processes
// merge instead of losing each other's entries. The lock file stays in place (removing it would race).
#pragma once
#include <string>

namespace ab {

class FileLock {
 public:
  // Blocks until the lock on `path` + ".lock" is held; throws UsageError when the lock file cannot be opened.
  explicit FileLock(const std::string& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace ab

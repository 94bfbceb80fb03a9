// An exclusive advisory lock (flock) on PATH.lock, held for the lifetime of the object: writers that
// re-read, merge and rewrite a shared file (the heuristic cache) take it so that concurrent processes
// merge instead of losing each other's entries. The holder removes the lock file on release; a process
// that waited on the removed file sees that once it holds the lock, and locks the file now at the path.
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
  std::string lock_;
  int fd_ = -1;
};

}  // namespace ab

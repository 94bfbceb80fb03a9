// flock-based exclusive lock beside a file, in a lock file of attnbench's own (no link followed).
#include "core/file_lock.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace ab {

namespace {
// The lock file's inode is still the one at its path (no holder removed it while this process waited).
bool still_in_place(int fd, const std::string& lock) {
  struct stat held{}, named{};
  return ::fstat(fd, &held) == 0 && ::lstat(lock.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}
}  // namespace

FileLock::FileLock(const std::string& path) : lock_(path + ".lock") {
  const std::string& lock = lock_;
  for (;;) {
    // Never through a planted link (O_NOFOLLOW), never waiting on a FIFO (O_NONBLOCK), never truncating.
    fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd_ < 0)
      throw UsageError(fmt::format("cannot lock '{}': {} ({})", path, lock,
                                   errno == ELOOP ? "a symbolic link; attnbench uses only a lock file of its own"
                                                  : std::strerror(errno)));
    struct stat st{};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw UsageError(fmt::format("cannot lock '{}': {} is not a regular file", path, lock));
    }
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd_);
      throw UsageError(fmt::format("cannot lock '{}': {} ({})", path, lock, std::strerror(err)));
    }
    if (still_in_place(fd_, lock)) return;
    ::close(fd_);  // the holder before us removed it on release: lock the file now at the path
  }
}

FileLock::~FileLock() {
  if (fd_ < 0) return;
  // Removed while held, so a process that waited on this inode sees it gone and locks the new one.
  ::unlink(lock_.c_str());
  ::close(fd_);  // closing releases the lock
}

}  // namespace ab

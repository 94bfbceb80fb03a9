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

FileLock::FileLock(const std::string& path) {
  std::string lock = path + ".lock";
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
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace ab

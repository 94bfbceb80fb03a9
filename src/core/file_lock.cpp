// flock-based exclusive lock beside a file.
#include "core/file_lock.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace ab {

FileLock::FileLock(const std::string& path) {
  std::string lock = path + ".lock";
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw UsageError(fmt::format("cannot lock '{}': {} ({})", path, lock, std::strerror(errno)));
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

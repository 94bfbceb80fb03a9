// Writing a whole buffer to a file descriptor: short writes continued and EINTR retried, the one loop behind
// every raw write (the file writer, journals, a plugin loader's answer, the worker pool's tasks).
#pragma once
#include <cerrno>
#include <string_view>

#include <unistd.h>

namespace ab {

// True once all of `text` is written; false with errno set when a write fails (0 written: EIO).
inline bool write_fully(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace ab

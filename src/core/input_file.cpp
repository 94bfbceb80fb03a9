// Bounded, non-blocking reads of regular files and explicitly named streams.
#include "core/input_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/text_excerpt.hpp"

namespace ab {

namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO or pipe";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string too_large(std::int64_t max_bytes) {
  return fmt::format("larger than {}; refused",
                     max_bytes >= (1 << 20) ? fmt::format("{} MiB", max_bytes >> 20) : fmt::format("{} bytes", max_bytes));
}

[[noreturn]] void refuse_input(const std::string& path, const std::string& why) {
  throw UsageError(fmt::format("{}: {}", quoted_path(path), why));
}

// Opens `path` for reading without blocking (O_NONBLOCK: a FIFO with no writer opens at once) and checks
// what it is; returns the descriptor and its size (-1 for a stream).
int open_checked(const std::string& path, std::int64_t max_bytes, std::int64_t* size) {
  if (path == "-") {
    *size = -1;
    return STDIN_FILENO;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) refuse_input(path, fmt::format("cannot open file ({})", std::strerror(errno)));
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    refuse_input(path, fmt::format("cannot open file ({})", std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    refuse_input(path, "is a directory, not a file");
  }
  if (S_ISREG(st.st_mode)) {
    if (st.st_size > max_bytes) {
      ::close(fd);
      refuse_input(path, too_large(max_bytes));
    }
    *size = st.st_size;
  } else if (names_stream(path)) {
    *size = -1;
  } else {
    ::close(fd);
    refuse_input(path, fmt::format("{}, not a regular file; attnbench reads regular files, or a stream named as - or "
                             "/dev/stdin", kind_of(st.st_mode)));
  }
  // Blocking reads from here on: a regular file never waits, and a stream the user named is waited on, as asked.
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace

bool names_stream(const std::string& path) {
  if (path == "-" || path == "/dev/stdin") return true;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    std::size_t n = std::strlen(prefix);
    if (path.compare(0, n, prefix) == 0 && all_digits(path.substr(n))) return true;
  }
  return false;
}

std::string quoted_path(const std::string& path) { return "'" + escaped_text(path, 160) + "'"; }

std::string read_input_file(const std::string& path, std::int64_t max_bytes) {
  std::int64_t size = 0;
  int fd = open_checked(path, max_bytes, &size);
  auto done = [&] {
    if (fd != STDIN_FILENO) ::close(fd);
  };
  std::string text;
  if (size > 0) text.reserve(static_cast<std::size_t>(size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      done();
      refuse_input(path, fmt::format("cannot read file ({})", std::strerror(err)));
    }
    if (n == 0) break;
    if (static_cast<std::int64_t>(text.size()) + n > max_bytes) {
      done();
      refuse_input(path, too_large(max_bytes));
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  done();
  return text;
}

void check_regular_input(const std::string& path, const std::string& what) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return;  // missing: the library's own opener says so
  if (S_ISDIR(st.st_mode)) throw UsageError(fmt::format("{} {}: is a directory, not a file", what, quoted_path(path)));
  if (!S_ISREG(st.st_mode))
    throw UsageError(fmt::format("{} {}: {}, not a regular file", what, quoted_path(path), kind_of(st.st_mode)));
}

}  // namespace ab

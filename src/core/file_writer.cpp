// Atomic, private, durable file writes.
#include "core/file_writer.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace ab {

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw UsageError(fmt::format("cannot write '{}': {}", path, why));
}

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

enum class Target { missing, regular, special };

// What `path` is (following links), refusing directories, dangling links and read-only files. For a
// regular file, *real is the file the name resolves to (the one to replace) and *mode its permissions.
Target classify(const std::string& path, std::string* real, mode_t* mode) {
  if (path.empty()) refuse(path, "empty path");
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) refuse(path, std::strerror(errno));
    struct stat lst{};
    if (::lstat(path.c_str(), &lst) == 0) refuse(path, "a symbolic link to a missing file");
    *real = path;
    return Target::missing;
  }
  if (S_ISDIR(st.st_mode)) refuse(path, "is a directory");
  if (!S_ISREG(st.st_mode)) return Target::special;
  // access() lets root write anything; a file with no write bit at all is read-only for everyone.
  if (::access(path.c_str(), W_OK) != 0 || (st.st_mode & 0222) == 0) refuse(path, "the file is read-only");
  char buf[PATH_MAX];
  if (!::realpath(path.c_str(), buf)) refuse(path, std::strerror(errno));
  *real = buf;
  *mode = st.st_mode & 07777;
  return Target::regular;
}

bool write_all(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

// A private temporary file beside `target`; returns its fd and sets *name.
int make_temp(const std::string& path, const std::string& target, std::string* name) {
  std::string pattern = target + ".tmp.XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  int fd = ::mkstemp(buf.data());
  if (fd < 0) refuse(path, fmt::format("directory '{}' missing or not writable ({})", dir_of(target), std::strerror(errno)));
  *name = buf.data();
  return fd;
}

mode_t default_mode() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

void check_writable(const std::string& path) {
  std::string real;
  mode_t mode = 0;
  if (classify(path, &real, &mode) == Target::special) return;
  std::string tmp;
  int fd = make_temp(path, real, &tmp);
  ::close(fd);
  ::unlink(tmp.c_str());
}

void write_file_atomic(const std::string& path, const std::string& text) {
  std::string real;
  mode_t mode = default_mode();
  Target kind = classify(path, &real, &mode);
  if (kind == Target::special) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) refuse(path, std::strerror(errno));
    bool ok = write_all(fd, text);
    int err = errno;
    ::close(fd);
    if (!ok) refuse(path, fmt::format("write failed ({})", std::strerror(err)));
    return;
  }
  std::string tmp;
  int fd = make_temp(path, real, &tmp);
  bool ok = ::fchmod(fd, mode) == 0 && write_all(fd, text) && ::fsync(fd) == 0;
  int err = errno;
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(tmp.c_str(), real.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    refuse(path, fmt::format("write failed ({})", std::strerror(err)));
  }
  int dfd = ::open(dir_of(real).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // the rename itself survives a crash
    ::close(dfd);
  }
}

}  // namespace ab

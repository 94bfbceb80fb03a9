// Atomic, private, durable file writes: an anonymous temporary file (O_TMPFILE) named only once written,
// and the named leftovers of writers that died cleaned up by the next write.
#include "core/file_writer.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/fd_write.hpp"
#include "core/input_file.hpp"

namespace ab {

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw UsageError(fmt::format("cannot write {}: {}", quoted_path(path), why));
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

// The prefix of every temporary file beside `target` that this host writes: TARGET.tmp.HOST.PID. (the PID
// tells a later writer whether its owner is still alive).
std::string temp_prefix(const std::string& target) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || !host[0]) std::strcpy(host, "host");
  for (char* c = host; *c; ++c)
    if (*c == '.' || *c == '/') *c = '-';
  return fmt::format("{}.tmp.{}.", target, host);
}

// An anonymous temporary file in `target`'s directory (O_TMPFILE: nothing to leave behind if the process
// dies while writing), or -1 where the file system has none.
int make_anonymous_temp(const std::string& target) {
#ifdef O_TMPFILE
  return ::open(dir_of(target).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#else
  (void)target;
  return -1;
#endif
}

// Gives the anonymous file `fd` a name beside `target` (a fresh TARGET.tmp.HOST.PID.N); false when it
// cannot (no /proc), errno set.
bool name_anonymous(int fd, const std::string& target, std::string* name) {
  const std::string proc = fmt::format("/proc/self/fd/{}", fd);
  for (unsigned attempt = 0; attempt < 100; ++attempt) {
    *name = temp_prefix(target) + fmt::format("{}.{}", ::getpid(), attempt);
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name->c_str(), AT_SYMLINK_FOLLOW) == 0) return true;
    if (errno != EEXIST) return false;
  }
  return false;
}

bool process_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

mode_t default_mode() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

int create_temp_beside(const std::string& path, const std::string& target, std::string* name) {
  std::string pattern = temp_prefix(target) + fmt::format("{}.XXXXXX", ::getpid());
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  int fd = ::mkostemp(buf.data(), O_CLOEXEC);  // never inherited by a child (a plugin row)
  if (fd < 0) refuse(path, fmt::format("directory '{}' missing or not writable ({})", dir_of(target), std::strerror(errno)));
  *name = buf.data();
  return fd;
}

// A SIGKILL before O_TMPFILE's link, or on a file system without O_TMPFILE, leaves such files.
void remove_stale_temps(const std::string& target) {
  const std::string prefix = temp_prefix(target);
  const std::string dir = dir_of(target);
  const std::string base = prefix.substr(prefix.rfind('/') == std::string::npos ? 0 : prefix.rfind('/') + 1);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string entry = e->d_name;
    if (entry.compare(0, base.size(), base) != 0) continue;
    char* end = nullptr;
    long pid = std::strtol(entry.c_str() + base.size(), &end, 10);
    if (end == entry.c_str() + base.size() || *end != '.' || process_alive(pid)) continue;
    // Its writer holds an flock while it writes: a lock we can take means nobody does (a PID seen dead may
    // still be a live writer's in another PID namespace of this host name).
    int fd = ::openat(::dirfd(d), entry.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) ::unlinkat(::dirfd(d), entry.c_str(), 0);
    ::close(fd);
  }
  ::closedir(d);
}

void check_writable(const std::string& path) {
  std::string real;
  mode_t mode = 0;
  if (classify(path, &real, &mode) == Target::special) return;
  std::string tmp;
  int fd = create_temp_beside(path, real, &tmp);
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
    bool ok = write_fully(fd, text);
    int err = errno;
    ::close(fd);
    if (!ok) refuse(path, fmt::format("write failed ({})", std::strerror(err)));
    return;
  }
  remove_stale_temps(real);
  std::string tmp;
  int fd = make_anonymous_temp(real);
  const bool anonymous = fd >= 0;
  if (!anonymous) fd = create_temp_beside(path, real, &tmp);
  (void)::flock(fd, LOCK_EX | LOCK_NB);  // held while it is written (remove_stale_temps leaves it); a failure only weakens that
  bool ok = ::fchmod(fd, mode) == 0 && write_fully(fd, text) && ::fsync(fd) == 0;
  int err = errno;
  if (ok && anonymous && !name_anonymous(fd, real, &tmp)) {
    // No /proc to link through: write it again under a name.
    ::close(fd);
    fd = create_temp_beside(path, real, &tmp);
    (void)::flock(fd, LOCK_EX | LOCK_NB);
    ok = ::fchmod(fd, mode) == 0 && write_fully(fd, text) && ::fsync(fd) == 0;
    err = errno;
  }
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(tmp.c_str(), real.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    if (!tmp.empty()) ::unlink(tmp.c_str());
    refuse(path, fmt::format("write failed ({})", std::strerror(err)));
  }
  int dfd = ::open(dir_of(real).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // the rename itself survives a crash
    ::close(dfd);
  }
}

}  // namespace ab

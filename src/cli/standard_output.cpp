// Checked standard output.
#include "cli/standard_output.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

namespace ab {

namespace {

bool g_stdout_closed = false;
int g_stdout_errno = 0;

}  // namespace

void reserve_standard_descriptors() {
  // A reader that went away (| head) is a write error to report, not a silent death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // open() returns the lowest free descriptor: this one, as the lower ones are open by now. Stdout is held by
    // a directory: writes to it fail (EBADF), and so does reopening it by name (/dev/stdout: EISDIR).
    int got = fd == STDOUT_FILENO ? ::open("/", O_RDONLY | O_DIRECTORY)
                                  : ::open("/dev/null", fd == STDERR_FILENO ? O_WRONLY : O_RDONLY);
    if (got >= 0 && got != fd) {
      ::dup2(got, fd);
      ::close(got);
    }
    if (fd == STDOUT_FILENO) g_stdout_closed = true;
  }
}

void note_standard_output_error(int err) {
  if (g_stdout_errno == 0) g_stdout_errno = err;
}

std::string standard_output_failure() {
  errno = 0;
  if (std::fflush(stdout) != 0) note_standard_output_error(errno);
  if (!std::ferror(stdout) && g_stdout_errno == 0) return "";
  if (g_stdout_closed) return "standard output is closed: what attnbench printed there was lost";
  return fmt::format("cannot write to standard output ({}): what attnbench printed there was lost",
                     g_stdout_errno ? std::strerror(g_stdout_errno) : "a write failed");
}

}  // namespace ab

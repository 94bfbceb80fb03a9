// Reading a child's standard output through a pipe with a deadline (orchestrate/child_output.hpp).
#include "orchestrate/child_output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

namespace ab {

namespace {

// The standard streams of the child: stdin and stderr on /dev/null, stdout on `pipe_write`.
bool arrange_streams(posix_spawn_file_actions_t* fa, int pipe_write) {
  return posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0) == 0 &&
         posix_spawn_file_actions_adddup2(fa, pipe_write, 1) == 0 &&
         posix_spawn_file_actions_addopen(fa, 2, "/dev/null", O_WRONLY, 0) == 0;
}

// Appends what can be read from the non-blocking `fd` now to c->out; true at its end (EOF or an error).
bool drain(int fd, std::size_t max_bytes, CapturedChild* c) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
    if (n == 0) return true;
    if (c->out.size() + static_cast<std::size_t>(n) > max_bytes) {
      c->overflow = true;
      return true;
    }
    c->out.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

CapturedChild run_self_capturing_stdout(const std::vector<std::string>& args, double timeout_s, std::size_t max_bytes) {
  CapturedChild c;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    c.start_error = std::strerror(errno);
    return c;
  }
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) {
    c.start_error = "posix_spawn_file_actions_init failed";
    ::close(fds[0]);
    ::close(fds[1]);
    return c;
  }
  pid_t pid = -1;
  if (arrange_streams(&fa, fds[1])) pid = spawn_self(args, nullptr, &fa, &c.start_error, /*shield_stop_signals=*/true);
  else c.start_error = "could not arrange its standard streams";
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  if (pid < 0 || fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0) {
    if (pid >= 0) {  // no way to read it: stop it
      c.start_error = std::strerror(errno);
      wait_with_deadline(pid, 0);
    }
    ::close(fds[0]);
    return c;
  }

  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(std::max(0.0, timeout_s));
  bool exited = false;
  int status = 0;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::min<long long>(left, 20))) < 0 && errno != EINTR) break;
    if (drain(fds[0], max_bytes, &c)) break;
    // A child that ended while something it started holds the pipe open: take what it wrote and stop.
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      drain(fds[0], max_bytes, &c);
      break;
    }
  }
  ::close(fds[0]);
  if (exited) {
    c.end.status = status;
  } else {
    if (c.overflow) kill(pid, SIGKILL);
    const double left = std::chrono::duration<double>(deadline - clock::now()).count();
    c.end = wait_with_deadline(pid, left);
  }
  return c;
}

}  // namespace ab

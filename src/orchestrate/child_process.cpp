// Starting this binary again and waiting for it with a deadline (orchestrate/child_process.hpp).
#include "orchestrate/child_process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include <fmt/format.h>

namespace ab {

pid_t spawn_self(const std::vector<std::string>& args, const std::vector<std::string>* env,
                 const posix_spawn_file_actions_t* actions, std::string* error, bool shield_stop_signals) {
  std::vector<std::string> arg_text = args, env_text = env ? *env : std::vector<std::string>();
  std::vector<char*> cargv, envp;
  for (auto& a : arg_text) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::fflush(stdout);  // nothing buffered here is written twice
  std::fflush(stderr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (shield_stop_signals) {
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGTERM);
    posix_spawnattr_setsigmask(&attr, &blocked);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  }
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", actions, &attr, cargv.data(), env ? envp.data() : environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    *error = std::strerror(rc);
    return -1;
  }
  return pid;
}

ChildEnd wait_with_deadline(pid_t pid, double timeout_s) {
  ChildEnd end;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, timeout_s));
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    pid_t r = waitpid(pid, &end.status, WNOHANG);
    if (r == pid) return end;
    if (r < 0 && errno != EINTR) return end;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &end.status, 0) < 0 && errno == EINTR) {
      }
      end.timed_out = true;
      return end;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? fmt::format("signal {} (SIG{})", sig, name) : fmt::format("signal {}", sig);
}

}  // namespace ab

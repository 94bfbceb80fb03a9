// This binary run again as a child process (plugin rows, plugin loaders): starting /proc/self/exe, waiting for
// it with a deadline (SIGKILL past it), and how it ended in words.
#pragma once
#include <spawn.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace ab {

// Starts /proc/self/exe with `args` (args[0] included) and `env` (nullptr: this process's environment), its
// standard streams arranged by `actions` (nullptr: inherited). `shield_stop_signals`: the child starts with
// SIGINT and SIGTERM blocked, so that a Ctrl-C or a scheduler's SIGTERM to the whole group stops the parent
// (which then winds down) and not a short child it waits for (a plugin's loader). Returns its pid, or -1 with
// why in *error.
pid_t spawn_self(const std::vector<std::string>& args, const std::vector<std::string>* env,
                 const posix_spawn_file_actions_t* actions, std::string* error, bool shield_stop_signals = false);

// How a child ended: killed at its deadline, or its wait status.
struct ChildEnd {
  bool timed_out = false;
  int status = 0;
};
// Waits for `pid` at most `timeout_s` seconds, then kills it (SIGKILL) and reaps it.
ChildEnd wait_with_deadline(pid_t pid, double timeout_s);

// "signal 11 (SIGSEGV)".
std::string signal_text(int sig);

}  // namespace ab

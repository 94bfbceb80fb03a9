// The handlers: record the stop request and restore the default action (SA_RESETHAND), nothing else.
#include "cli/stop_signals.hpp"

#include <csignal>

#include <fmt/format.h>

#include "core/stop_request.hpp"

namespace ab {

namespace {
void on_stop_signal(int signal) { request_stop(signal); }
}  // namespace

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return fmt::format("signal {}", signal);
}

int interrupted_exit_code() { return 128 + (stop_signal() > 0 ? stop_signal() : SIGTERM); }

}  // namespace ab

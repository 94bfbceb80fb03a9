// SIGINT and SIGTERM (Ctrl-C; Slurm before pre-emption or at the time limit) ask the run to stop
// (core/stop_request.hpp) instead of killing it: the current measurement ends, what finished is written and
// the process exits with 128 + the signal. A second signal of the same kind kills at once.
#pragma once
#include <string>

namespace ab {

void install_stop_signals();
// "SIGTERM", "SIGINT", or "signal N".
std::string signal_name(int signal);
// 128 + the signal that stopped the run (130 for SIGINT, 143 for SIGTERM).
int interrupted_exit_code();

}  // namespace ab

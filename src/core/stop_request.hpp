// A request to stop the run early (SIGINT or SIGTERM, installed by cli/stop_signals.cpp): one flag that the
// measurement loop, the grid runner and the tuner poll. Setting it is async-signal-safe (a lock-free atomic).
#pragma once

namespace ab {

// Records that signal `signal` asked the run to stop (the first one wins; later calls change nothing).
void request_stop(int signal) noexcept;
bool stop_requested() noexcept;
// The signal that asked (0: none).
int stop_signal() noexcept;
// Forgets a request (tests only).
void clear_stop_request() noexcept;

}  // namespace ab

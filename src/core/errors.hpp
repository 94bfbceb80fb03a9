// Exception types: UsageError (bad input, exit 2 with one line), UnsupportedError (a strategy cannot run a
// problem), BackendError (a library or device call failed; the message names the call and the error).
#pragma once
#include <stdexcept>
#include <string>

namespace ab {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct UnsupportedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct BackendError : std::runtime_error {
  using std::runtime_error::runtime_error;
  // True when the device context is unusable afterwards (sticky CUDA error) and must be rebuilt.
  bool sticky = false;
  BackendError(const std::string& what, bool sticky_error) : std::runtime_error(what), sticky(sticky_error) {}
};
// A stop request (SIGINT/SIGTERM, core/stop_request.hpp) cut long host work short (the CPU backend's and the
// references' loops): a failed call like any other, so every caller that survives a failed call survives it,
// and the runner, seeing the request, keeps nothing of the unfinished problem.
struct StopRequestedError : BackendError {
  StopRequestedError() : BackendError("stopped by a signal", false) {}
};

}  // namespace ab

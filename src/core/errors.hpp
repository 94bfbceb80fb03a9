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

}  // namespace ab

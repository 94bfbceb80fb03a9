// The isolated-run path: inputs rebuilt after device errors, and the strategy session's error handling.
#include "run/strategy_session.hpp"

#include "core/errors.hpp"

namespace ab {

bool ProblemWorkspace::prepare() {
  error_.clear();
  sticky_ = lost_ = false;
  try {
    in_.reset();
    in_ = make_();
    return true;
  } catch (const BackendError& e) {
    error_ = e.what();
    sticky_ = e.sticky;
    forget();
    lost_ = e.sticky && !be_.recover();
  } catch (const std::exception& e) {  // host allocations (std::bad_alloc) and the like
    error_ = e.what();
    forget();
  }
  return false;
}

void ProblemWorkspace::forget() {
  if (in_) in_->forget_device_memory();
  in_.reset();
}

bool ProblemWorkspace::recover_device() {
  bool ok = be_.recover();
  forget();
  lost_ = !ok;
  return ok;
}

StrategySession::~StrategySession() { teardown_quietly(); }

void StrategySession::setup(Backend& through, const Problem& p, const StrategyOptions& opt) {
  through_ = &through;
  touched_ = entered_ = true;
  st_.setup(through, p, ws_.inputs().io(), opt);
  set_up_ = true;
}

void StrategySession::teardown() {
  if (!touched_) return;
  set_up_ = touched_ = false;  // exactly once, even when it throws
  st_.teardown(*through_);
}

void StrategySession::teardown_quietly() {
  try {
    teardown();
  } catch (...) {  // a second error while cleaning up after the first changes nothing
  }
}

std::optional<SessionFailure> StrategySession::run(const std::function<void()>& body) {
  SessionFailure f;
  try {
    body();
    return std::nullopt;
  } catch (const UsageError& e) {
    if (propagate_usage_errors_) {
      teardown_quietly();
      throw;
    }
    f.what = e.what();
  } catch (const UnsupportedError& e) {
    f.unsupported = true;
    f.what = e.what();
    if (set_up_) teardown();  // as before: an error here is not swallowed
    return f;
  } catch (const BackendError& e) {
    f.what = e.what();
    f.sticky = e.sticky;
  } catch (const std::exception& e) {
    f.what = e.what();
  }
  if (!f.sticky) {
    if (set_up_) teardown_quietly();
    touched_ = false;  // a setup that threw by itself left nothing to tear down
    return f;
  }
  // The context is gone: the strategy lets go of its device memory, the context is rebuilt (the allocations
  // with it), then the strategy drops its state.
  // Whenever setup was entered: a sticky error thrown from teardown itself leaves the strategy holding what it
  // had not freed yet.
  if (entered_) st_.forget_device_memory();
  bool ok = ws_.recover_device();
  teardown_quietly();
  f.context_lost = !ok;
  return f;
}

}  // namespace ab

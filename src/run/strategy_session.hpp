// The one isolated-run path of run and tune: a problem's inputs that survive a device error
// (ProblemWorkspace) and one strategy on one problem as an RAII session (StrategySession): set up once,
// run, torn down exactly once (explicitly, or by the destructor after an error), and after an error the
// device recovered and the inputs rebuilt. When the device cannot be rebuilt the outcome says so
// (context_lost): the runner then hands the rest of the grid to a fresh process.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/backend.hpp"
#include "core/strategy.hpp"
#include "run/problem_inputs.hpp"

namespace ab {

// A problem's device inputs, built by `make` and rebuilt after a device error.
class ProblemWorkspace {
 public:
  using Make = std::function<std::unique_ptr<ProblemInputs>()>;
  ProblemWorkspace(Backend& backend, Make make) : be_(backend), make_(std::move(make)) {}
  ProblemWorkspace(const ProblemWorkspace&) = delete;
  ProblemWorkspace& operator=(const ProblemWorkspace&) = delete;

  // Builds the inputs. On an error returns false and records it (error(), error_sticky()); after a sticky
  // one the device is recovered (device_lost() when that failed).
  bool prepare();
  bool ready() const { return in_ != nullptr; }
  ProblemInputs& inputs() { return *in_; }
  const std::string& error() const { return error_; }
  bool error_sticky() const { return sticky_; }
  bool device_lost() const { return lost_; }
  // The context was rebuilt (recover): the allocations are gone; drop them without freeing.
  void forget();
  // After a sticky error elsewhere: recover the device and forget the inputs (prepare() rebuilds them).
  // Returns false when the device could not be recovered (device_lost()).
  bool recover_device();

 private:
  Backend& be_;
  Make make_;
  std::unique_ptr<ProblemInputs> in_;
  std::string error_;
  bool sticky_ = false, lost_ = false;
};

// How a session's body ended when it threw.
struct SessionFailure {
  bool unsupported = false;  // UnsupportedError: the strategy cannot run this problem
  std::string what;          // the exception's message
  bool sticky = false;       // a device error that lost the context
  bool context_lost = false; // sticky, and the device could not be recovered in this process
};

// One strategy on one problem. setup() at most once; teardown() exactly once once set up (the destructor
// does it, quietly, when the body did not). run() isolates a body: any exception becomes a SessionFailure,
// with the strategy torn down and, after a sticky device error, the device recovered and the workspace's
// inputs rebuilt (or context_lost). UsageError propagates when `propagate_usage_errors`.
class StrategySession {
 public:
  StrategySession(Backend& backend, Strategy& strategy, ProblemWorkspace& workspace,
                  bool propagate_usage_errors = false)
      : be_(backend), st_(strategy), ws_(workspace), propagate_usage_errors_(propagate_usage_errors) {}
  StrategySession(const StrategySession&) = delete;
  StrategySession& operator=(const StrategySession&) = delete;
  ~StrategySession();

  // Sets the strategy up through `through` (the backend, or a wrapper of it such as the tuner's recorder).
  void setup(Backend& through, const Problem& p, const StrategyOptions& opt);
  void setup(const Problem& p, const StrategyOptions& opt) { setup(be_, p, opt); }
  // Tears the strategy down (errors propagate); a no-op when it is not set up.
  void teardown();
  bool set_up() const { return set_up_; }
  Strategy& strategy() { return st_; }
  ProblemInputs& inputs() { return ws_.inputs(); }

  // Runs `body`; std::nullopt when it returned, else how it failed (see the class comment).
  std::optional<SessionFailure> run(const std::function<void()>& body);

 private:
  void teardown_quietly();
  Backend& be_;
  Strategy& st_;
  ProblemWorkspace& ws_;
  Backend* through_ = nullptr;
  bool propagate_usage_errors_ = false;
  bool set_up_ = false;   // setup returned and teardown has not run
  bool touched_ = false;  // setup was entered and teardown has not run (a sticky error may leave parts)
  bool entered_ = false;  // setup was entered in this session, whether or not teardown ran since (forget_device_memory)
};

}  // namespace ab

// A smaller forward for verifying GEMM candidates: the same strategy on one sequence and one head (B=1,
// H=1), set up beside the problem being tuned. A strategy that makes one GEMM call per head and page
// (nested) has the same GEMM shapes there, so a candidate is verified with a few launches instead of one
// per head and page (0.2 ms against 8 ms at the default grid). Batched shapes carry B·H in them and are not
// found there: they are verified on the problem itself.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/strategy.hpp"
#include "run/problem_inputs.hpp"
#include "tune/plan_recorder.hpp"

namespace ab {

class ReducedVerifier {
 public:
  // Sets up `strategy` (a name) on the reduced problem of `p`. A problem already at B=1 H=1, a strategy
  // that cannot take the reduced problem or a failure setting it up (not a lost device) leave it empty:
  // covers() is then false for every shape. A lost device context propagates.
  ReducedVerifier(Backend& be, const std::string& strategy, const Problem& p, const StrategyOptions& opt,
                  std::uint64_t seed);
  ~ReducedVerifier();
  ReducedVerifier(const ReducedVerifier&) = delete;
  ReducedVerifier& operator=(const ReducedVerifier&) = delete;

  // True when the reduced problem's plans include GEMM shape `key`.
  bool covers(const std::string& key) const { return plans_.count(key) > 0; }
  // Sets `a` on the reduced problem's plans of shape `key` and verifies its forward: "" when it passes,
  // else why not. Throws BackendError when the algorithm cannot be set or the forward fails.
  std::string check(const std::string& key, const GemmAlgo& a);
  // Puts the reduced problem's plans of shape `key` (when it has them) at a decided choice, so that later
  // shapes are verified beside it and not beside the last candidate tried.
  void use(const std::string& key, const GemmAlgo& a, const std::string& source);
  // "B=1 H=1 ..." when set up, else "".
  std::string label() const { return ready_ ? problem_.label() : std::string(); }

 private:
  Backend& be_;
  Problem problem_;
  std::unique_ptr<Strategy> strategy_;
  std::unique_ptr<ProblemInputs> inputs_;
  std::unique_ptr<PlanRecorder> rec_;
  std::map<std::string, std::vector<GemmPlanId>> plans_;  // shape key -> the reduced problem's plans
  bool ready_ = false;
};

}  // namespace ab

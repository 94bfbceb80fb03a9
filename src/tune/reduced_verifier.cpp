// Setting up, using and tearing down the reduced (B=1, H=1) verification forward.
#include "tune/reduced_verifier.hpp"

#include "core/errors.hpp"
#include "strategies/registry.hpp"

namespace ab {

ReducedVerifier::ReducedVerifier(Backend& be, const std::string& strategy, const Problem& p,
                                 const StrategyOptions& opt, std::uint64_t seed)
    : be_(be), problem_(p) {
  if (p.batch == 1 && p.heads == 1) return;  // the problem itself is as small
  problem_.batch = 1;
  problem_.heads = 1;
  auto made = make_strategies(strategy);
  if (made.size() != 1) return;
  strategy_ = std::move(made.front());
  if (!strategy_->can_implement(problem_, be_, opt).empty()) return;
  try {
    inputs_ = std::make_unique<ProblemInputs>(be_, problem_, seed);
    rec_ = std::make_unique<PlanRecorder>(be_);
    strategy_->setup(*rec_, problem_, inputs_->io(), opt);
    ready_ = true;
  } catch (const BackendError& e) {
    if (e.sticky) throw;
    inputs_.reset();
    return;
  }
  for (GemmPlanId id : rec_->plans()) plans_[rec_->gemm().plan_shape(id).key()].push_back(id);
}

ReducedVerifier::~ReducedVerifier() {
  if (!ready_) return;
  try {
    strategy_->teardown(*rec_);
  } catch (...) {
    // After a lost context the teardown may fail; the memory is gone with the context.
  }
}

void ReducedVerifier::use(const std::string& key, const GemmAlgo& a, const std::string& source) {
  auto it = plans_.find(key);
  if (it == plans_.end()) return;
  for (GemmPlanId id : it->second) rec_->gemm().set_algo(id, a, source);
}

std::string ReducedVerifier::check(const std::string& key, const GemmAlgo& a) {
  for (GemmPlanId id : plans_.at(key)) rec_->gemm().set_algo(id, a, "tuned");
  return inputs_->check_forward([&] { strategy_->run(*rec_); });
}

}  // namespace ab

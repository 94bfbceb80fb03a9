// Setting up, using and tearing down the reduced verification forward: one sequence of the longest length and
// one KV head with its group of query heads (B=1, H=group, KVH=1), so that the GEMM shapes, packed or not,
// are the tuned problem's.
#include "tune/reduced_verifier.hpp"

#include "core/errors.hpp"
#include "strategies/registry.hpp"

namespace ab {

ReducedVerifier::ReducedVerifier(Backend& be, const std::string& strategy, const Problem& p,
                                 const StrategyOptions& opt, std::uint64_t seed)
    : be_(be), problem_(p) {
  if (p.batch == 1 && p.kv_heads == 1) return;  // the problem itself is as small
  ProblemSpec s;
  s.batch = 1;
  s.heads = p.group();
  s.kv_heads = 1;
  s.seq_len = p.seq_len;
  s.q_len = p.q_len;
  s.head_dim = p.head_dim;
  s.head_dim_v = p.head_dim_v;
  s.page_size = p.page_size;
  s.kv_layout = p.kv_layout;
  s.dtype = p.dtype;
  s.causal = p.causal;
  s.window = p.window;
  s.softcap = p.softcap;
  s.sinks = p.sinks;
  s.kv_format = p.kv_format;
  s.kv_scale = p.kv_scale;
  problem_ = make_problem(s);
  auto made = make_strategies(strategy);
  if (made.size() != 1) return;
  strategy_ = std::move(made.front());
  if (!strategy_->can_run(problem_, be_, opt).empty()) return;
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

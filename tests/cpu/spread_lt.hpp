// A cuBLASLt stand-in for the tune tests, over the CPU backend and on the virtual clock (cpu/virtual_clock.hpp):
// its candidates (c0, the heuristic's choice, c1, ...) are all correct and differ only in time. Candidate k's
// calls cost cost[k] virtual ms each, times a deterministic noise within ±0.5%. Candidate k is labelled "c<k>"
// (set_algo reads k from the label); its attributes are {"K": k}, or `attrs(k)` when given (cuBLASLt's ALGO_ID,
// TILE_ID, ... for the grouped probe's tests, where a per-candidate attribute would make every one a base). A
// heuristic query returns the first `top`; an exhaustive one the first `top`, or all of them for top <= 0 (no
// cap). `calls` counts every GEMM call; stall_first_call makes one candidate's first call on each plan slow. Shared by test_screen_halving.cpp and test_group_probe.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend_decorators.hpp"
#include "measure/measure.hpp"
#include "cpu/virtual_clock.hpp"

namespace ab_test {

// The measurement settings the tunes over a SpreadLt take (virtual time: quick, and noise never stops a sample).
inline ab::MeasureSettings quick_measure() {
  ab::MeasureSettings m;
  m.warmup = 1;
  m.min_samples = 5;
  m.max_samples = 20;
  m.max_noise = 0.5;
  m.max_time_s = 0.2;
  return m;
}

class SpreadLt : public ab::ComposedBackend, public ab::ForwardingGemmEngine {
 public:
  SpreadLt(ab::Backend& cpu, std::vector<double> cost, std::function<nlohmann::json(int)> attrs = nullptr)
      : ab::ComposedBackend(cpu), ab::ForwardingGemmEngine(cpu.gemm()), clock_(cpu.profiler()), cost_(std::move(cost)),
        attrs_(std::move(attrs)) {
    replace_gemm(*this);
    replace_profiler(clock_);
  }
  std::int64_t calls = 0;
  const VirtualClock& clock() const { return clock_; }
  // Candidate k's first call on each plan costs `extra_ms` more: a host stall in one sample.
  void stall_first_call(int k, double extra_ms) { stalls_[k] = extra_ms; }

  std::vector<ab::GemmAlgo> candidates(ab::GemmPlanId plan, int top, bool exhaustive) override {
    (void)plan_shape(plan);
    const int n = static_cast<int>(cost_.size());
    const int listed = exhaustive && top <= 0 ? n : std::min(top, n);
    std::vector<ab::GemmAlgo> all;
    for (int k = 0; k < listed; ++k) {
      ab::GemmAlgo a;
      a.label = "c" + std::to_string(k);
      a.attrs = attrs_ ? attrs_(k) : nlohmann::json{{"K", k}};
      a.heuristic_first = k == 0;
      all.push_back(a);
    }
    return all;
  }
  void set_algo(ab::GemmPlanId plan, const ab::GemmAlgo& a, const std::string& source) override {
    current_[plan] = std::stoi(a.label.substr(1));
    ab::ForwardingGemmEngine::set_algo(plan, a, source);
  }
  void run(ab::GemmPlanId plan, const void* a, const void* b, void* c, float alpha, float beta) override {
    ++calls;
    auto it = current_.find(plan);
    const int k = it == current_.end() ? 0 : it->second;
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    const double noise = (static_cast<double>(state_ >> 11) / 9007199254740992.0 - 0.5) * 0.01;  // ±0.5%
    clock_.spend(cost_[static_cast<std::size_t>(k)] * (1 + noise));
    if (auto st = stalls_.find(k); st != stalls_.end() && stalled_.insert({plan, k}).second) clock_.spend(st->second);
    ab::ForwardingGemmEngine::run(plan, a, b, c, alpha, beta);
  }

 private:
  VirtualClock clock_;
  std::vector<double> cost_;
  std::function<nlohmann::json(int)> attrs_;
  std::map<ab::GemmPlanId, int> current_;
  std::map<int, double> stalls_;
  std::set<std::pair<ab::GemmPlanId, int>> stalled_;
  std::uint64_t state_ = 88172645463325252ull;
};

}  // namespace ab_test

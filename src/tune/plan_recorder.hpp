// A Backend decorator that forwards everything to a real backend and records the GEMM plan ids made
// through it, so the tuner knows which plans a strategy's setup created without relying on id numbering,
// and, when asked, the GEMM calls made through it (so a GEMM's share of a forward can be replayed alone).
#pragma once
#include <vector>

#include "core/forwarding_backend.hpp"

namespace ab {

// One cublasLtMatmul call as the strategy made it.
struct GemmCall {
  GemmPlanId plan;
  const void* a;
  const void* b;
  void* c;
  float alpha, beta;
};

class PlanRecorder : public ForwardingBackend {
 public:
  explicit PlanRecorder(Backend& inner) : ForwardingBackend(inner) {}
  // Plans made since construction or the last release_gemm_plans / clear_plans, in creation order.
  const std::vector<GemmPlanId>& plans() const { return plans_; }
  void clear_plans() { plans_.clear(); }
  // While on, every gemm() call is appended to calls(); turning it on clears the list.
  void record_calls(bool on) {
    recording_ = on;
    if (on) calls_.clear();
  }
  const std::vector<GemmCall>& calls() const { return calls_; }

  GemmPlanId make_gemm_plan(const GemmShape& shape) override {
    GemmPlanId id = b_.make_gemm_plan(shape);
    plans_.push_back(id);
    return id;
  }
  void gemm(GemmPlanId plan, const void* a, const void* b, void* c, float alpha, float beta) override {
    if (recording_) calls_.push_back({plan, a, b, c, alpha, beta});
    b_.gemm(plan, a, b, c, alpha, beta);
  }
  void release_gemm_plans() override {
    b_.release_gemm_plans();
    plans_.clear();
  }
  bool recover() override {
    plans_.clear();
    return b_.recover();
  }

 private:
  std::vector<GemmPlanId> plans_;
  bool recording_ = false;
  std::vector<GemmCall> calls_;
};

}  // namespace ab

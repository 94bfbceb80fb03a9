// The tuner's view of a backend: the same device, memory, kernels, verifier and profiler, with only the
// GEMM engine wrapped by a recorder of the plans made through it (so the tuner knows which plans a
// strategy's setup created without relying on id numbering) and, when asked, of the GEMM calls made
// through it (so a GEMM's share of a forward can be replayed alone).
#pragma once
#include <vector>

#include "core/backend_decorators.hpp"

namespace ab {

// One cublasLtMatmul call as the strategy made it.
struct GemmCall {
  GemmPlanId plan;
  const void* a;
  const void* b;
  void* c;
  float alpha, beta;
};

// A GemmEngine that forwards to another and records plan ids and, while asked, calls.
class RecordingGemmEngine : public ForwardingGemmEngine {
 public:
  using ForwardingGemmEngine::ForwardingGemmEngine;
  // Plans made since construction or the last clear_plans, in creation order.
  const std::vector<GemmPlanId>& plans() const { return plans_; }
  void clear_plans() { plans_.clear(); }
  // While on, every run() call is appended to calls(); turning it on clears the list.
  void record_calls(bool on) {
    recording_ = on;
    if (on) calls_.clear();
  }
  const std::vector<GemmCall>& calls() const { return calls_; }

  GemmPlan make_plan(const GemmShape& shape) override {
    GemmPlan plan = g_.make_plan(shape);
    plans_.push_back(plan.id());
    return plan;
  }
  using GemmEngine::run;
  void run(GemmPlanId plan, const void* a, const void* b, void* c, float alpha, float beta) override {
    if (recording_) calls_.push_back({plan, a, b, c, alpha, beta});
    g_.run(plan, a, b, c, alpha, beta);
  }

 private:
  std::vector<GemmPlanId> plans_;
  bool recording_ = false;
  std::vector<GemmCall> calls_;
};

// `inner` with its GEMM engine recorded. Plans made through it belong to inner's engine.
class PlanRecorder : public ComposedBackend {
 public:
  explicit PlanRecorder(Backend& inner) : ComposedBackend(inner), engine_(inner.gemm()) { replace_gemm(engine_); }
  const std::vector<GemmPlanId>& plans() const { return engine_.plans(); }
  void clear_plans() { engine_.clear_plans(); }
  void record_calls(bool on) { engine_.record_calls(on); }
  const std::vector<GemmCall>& calls() const { return engine_.calls(); }
  // A recovered device has lost its plans.
  bool recover() override {
    engine_.clear_plans();
    return ComposedBackend::recover();
  }

 private:
  RecordingGemmEngine engine_;
};

}  // namespace ab

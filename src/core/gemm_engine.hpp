// The GEMM-engine interface of a backend (cuBLASLt on CUDA, fp64 loops on CPU): plans made once in setup
// and held as move-only RAII handles, run in the timed forward, reported, and re-pointed at tuning
// candidates. The tuner wraps only this interface (tune/plan_recorder.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"

namespace ab {

enum class BatchMode { single, strided, pointer_array };
const char* batch_mode_name(BatchMode m);

// Row-major C[m,n] = alpha * A[m,k] * op(B) + beta * C. op(B) = B^T with B stored [n,k] when b_trans,
// else B stored [k,n]. Leading dimensions are row strides in elements. In strided mode matrix i of each
// operand starts stride_* elements after matrix i-1; in pointer-array mode the call passes arrays of
// `batch` pointers (in backend memory) instead of base pointers.
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  bool b_trans = false;
  DType a_type = DType::fp16, b_type = DType::fp16, c_type = DType::fp32;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  BatchMode mode = BatchMode::single;
  std::int64_t batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  std::string key() const;  // canonical text, the tuner cache key
  nlohmann::json to_json() const;
};

// One algorithm a GEMM plan could use. On CUDA, `attrs` holds the decoded cublasLtMatmulAlgo_t
// configuration (ALGO_ID, TILE_ID, STAGES_ID, SPLITK_NUM, REDUCTION_SCHEME, CTA_SWIZZLING, CUSTOM_OPTION,
// INNER_SHAPE_ID, CLUSTER_SHAPE_ID) and `blob` its 64 raw bytes; on CPU a single "cpu-reference" entry.
struct GemmAlgo {
  nlohmann::json attrs;
  std::vector<std::uint8_t> blob;
  std::string label;           // short human-readable form
  bool heuristic_first = false;  // the heuristic's first choice
  nlohmann::json to_json() const;
  static GemmAlgo from_json(const nlohmann::json& j);
};

// A plan's number inside its engine: unique for the engine's lifetime (never reused), so a tuner may
// keep it as a non-owning reference to a plan someone else holds.
using GemmPlanId = int;

class GemmEngine;

// Owns one plan of one engine; releases it on destruction. Move-only. Must not outlive its engine.
class GemmPlan {
 public:
  GemmPlan() = default;
  GemmPlan(GemmEngine& engine, GemmPlanId id) : engine_(&engine), id_(id) {}
  ~GemmPlan() { reset(); }
  GemmPlan(GemmPlan&& o) noexcept : engine_(o.engine_), id_(o.id_) { o.engine_ = nullptr; }
  GemmPlan& operator=(GemmPlan&& o) noexcept;
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  bool valid() const { return engine_ != nullptr; }
  GemmPlanId id() const { return id_; }  // meaningful only while valid()
  void reset() noexcept;  // releases the plan now

 private:
  GemmEngine* engine_ = nullptr;
  GemmPlanId id_ = -1;
};

// What one live plan chose, as GemmEngine::plan_report lists it.
struct GemmPlanChoice {
  std::string shape;                  // GemmShape::key()
  std::string algo;                   // the algorithm's label
  std::string source;                 // heuristic | tuned | cache
  nlohmann::json attrs;               // the backend's decoded algorithm configuration (cuBLASLt ALGO_ID, ...); null: none
  std::int64_t workspace_bytes = -1;  // the algorithm's workspace; -1: not reported
  std::string note;                   // why the plan differs from what was asked (a cached algorithm refused...)
};

class GemmEngine {
 public:
  virtual ~GemmEngine() = default;

  // Plans hold descriptors and the chosen algorithm (from the chooser, else the heuristic).
  virtual GemmPlan make_plan(const GemmShape& shape) = 0;
  // One GEMM with plan `plan` (one library call).
  virtual void run(GemmPlanId plan, const void* a, const void* b, void* c, float alpha, float beta) = 0;
  void run(const GemmPlan& plan, const void* a, const void* b, void* c, float alpha, float beta) {
    run(plan.id(), a, b, c, alpha, beta);
  }
  // What each live plan chose (shape, algorithm, source heuristic|tuned|cache), in creation order.
  virtual std::vector<GemmPlanChoice> plan_report() const = 0;
  virtual GemmShape plan_shape(GemmPlanId plan) const = 0;
  // Tuning: candidate algorithms for a plan (heuristic top-N, or the exhaustive space capped at `top`
  // candidates, 0 for no cap, the heuristic's first choice and the distinct base configurations first),
  // and switching a plan to one of them (throws BackendError when the algorithm cannot run the shape).
  // `source` is what the report shows: "heuristic", "tuned" or "cache".
  virtual std::vector<GemmAlgo> candidates(GemmPlanId plan, int top, bool exhaustive) = 0;
  virtual void set_algo(GemmPlanId plan, const GemmAlgo& algo, const std::string& source) = 0;
  // An algorithm chooser consulted by make_plan (the heuristic cache); nullptr restores the heuristic.
  // It returns true and fills `algo` when it has a choice for the shape.
  using Chooser = std::function<bool(const GemmShape&, GemmAlgo* algo)>;
  virtual void set_chooser(Chooser chooser) = 0;

 protected:
  friend class GemmPlan;
  // Called by GemmPlan when it lets its plan go. An id the engine no longer holds (after recover) is ignored.
  virtual void release_plan(GemmPlanId plan) noexcept = 0;
};

inline GemmPlan& GemmPlan::operator=(GemmPlan&& o) noexcept {
  if (this != &o) {
    reset();
    engine_ = o.engine_;
    id_ = o.id_;
    o.engine_ = nullptr;
  }
  return *this;
}

inline void GemmPlan::reset() noexcept {
  if (engine_) engine_->release_plan(id_);
  engine_ = nullptr;
}

}  // namespace ab

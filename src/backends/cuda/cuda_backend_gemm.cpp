// The CUDA backend's GEMM plans: made once in setup (descriptors, algorithm from the chooser or the
// heuristic), run with one cublasLtMatmul each, reported, and re-pointed at tuning candidates.
#include <limits>

#include <fmt/format.h>

#include "backends/cuda/cublaslt_algo.hpp"
#include "backends/cuda/cuda_backend_impl.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "core/errors.hpp"

namespace ab::cuda {

LtPlan& CudaBackend::plan_at(GemmPlanId id) const {
  auto it = plans_.find(id);
  if (it == plans_.end())
    throw BackendError(fmt::format("cuda gemm: unknown plan {} ({} plans live)", id, plans_.size()));
  return *it->second;
}

GemmPlan CudaBackend::make_plan(const GemmShape& shape) {
  auto plan = std::make_unique<LtPlan>(shape);
  bool chosen = false;
  if (chooser_) {
    GemmAlgo want;
    if (chooser_(shape, &want)) {
      std::string why;
      if (rebuild_algo(lt_, *plan, want, kWorkspaceBytes, &plan->algo, &plan->algo_workspace, &why)) {
        plan->chosen = decode_algo(plan->algo);
        plan->source = "cache";
        chosen = true;
      } else {
        plan->note = fmt::format("cached algorithm '{}' rejected ({}); using the heuristic", want.label, why);
      }
    }
  }
  if (!chosen) {
    auto res = lt_heuristic(lt_, *plan, 1, kWorkspaceBytes);
    if (res.empty())
      throw BackendError(fmt::format("cuBLASLt heuristic found no algorithm for gemm {}", shape.key()));
    plan->algo = res[0].algo;
    plan->algo_workspace = res[0].workspaceSize;
    plan->chosen = decode_algo(plan->algo);
    plan->chosen.heuristic_first = true;
    plan->source = "heuristic";
  }
  const GemmPlanId id = next_plan_id_++;
  plans_.emplace(id, std::move(plan));
  return GemmPlan(*this, id);
}

void CudaBackend::run(GemmPlanId id, const void* a, const void* b, void* c, float alpha, float beta) {
  const LtPlan& p = plan_at(id);
  gemm_calls_++;
  lt_matmul(lt_, p, a, b, c, alpha, beta, workspace_, kWorkspaceBytes, stream_);
}

std::vector<GemmPlanChoice> CudaBackend::plan_report() const {
  std::vector<GemmPlanChoice> out;
  for (const auto& entry : plans_) {
    const std::unique_ptr<LtPlan>& p = entry.second;
    GemmPlanChoice c;
    c.shape = p->shape().key();
    c.algo = p->chosen.label;
    c.attrs = p->chosen.attrs;
    c.source = p->source;
    c.workspace_bytes = static_cast<std::int64_t>(p->algo_workspace);
    c.note = p->note;
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<GemmAlgo> CudaBackend::candidates(GemmPlanId id, int top, bool exhaustive) {
  const LtPlan& p = plan_at(id);
  return exhaustive ? exhaustive_candidates(lt_, p, kWorkspaceBytes, top > 0 ? top : std::numeric_limits<int>::max())
                    : heuristic_candidates(lt_, p, top, kWorkspaceBytes);
}

void CudaBackend::set_algo(GemmPlanId id, const GemmAlgo& algo, const std::string& source) {
  LtPlan& p = plan_at(id);
  cublasLtMatmulAlgo_t a{};
  std::size_t ws = 0;
  std::string why;
  if (!rebuild_algo(lt_, p, algo, kWorkspaceBytes, &a, &ws, &why))
    throw BackendError(fmt::format("cuBLASLt algorithm '{}' cannot run gemm {}: {}", algo.label, p.shape().key(), why));
  p.algo = a;
  p.algo_workspace = ws;
  p.chosen = decode_algo(a);
  p.chosen.heuristic_first = algo.heuristic_first;
  p.source = source;
  p.note.clear();
}

}  // namespace ab::cuda

// cuBLASLt algorithms as GemmAlgo: decoding a cublasLtMatmulAlgo_t (attributes, 64-byte blob, label),
// rebuilding one from a GemmAlgo, checking it against a plan, and the candidate lists the tuner searches
// (heuristic top-N, or the exhaustive space enumerated from the algorithm capabilities).
#pragma once
#include <cublasLt.h>

#include <string>
#include <vector>

#include "backends/cuda/cublaslt_plan.hpp"
#include "core/backend.hpp"

namespace ab::cuda {

GemmAlgo decode_algo(const cublasLtMatmulAlgo_t& algo);

// True when `algo` passes cublasLtMatmulAlgoCheck for the plan, fits `workspace_bytes` and needs no more
// alignment or batch support than the plan has; else false with the reason in `why`.
bool check_algo(cublasLtHandle_t h, const LtPlan& p, const cublasLtMatmulAlgo_t& algo, std::size_t workspace_bytes,
                std::size_t* workspace_needed, std::string* why);

// Rebuilds the algorithm from the blob (64 bytes), else from attrs (ALGO_ID and the config attributes),
// and checks it. False with the reason when neither runs the plan.
bool rebuild_algo(cublasLtHandle_t h, const LtPlan& p, const GemmAlgo& in, std::size_t workspace_bytes,
                  cublasLtMatmulAlgo_t* out, std::size_t* workspace_needed, std::string* why);

// The heuristic's top `top` (first marked heuristic_first).
std::vector<GemmAlgo> heuristic_candidates(cublasLtHandle_t h, const LtPlan& p, int top, std::size_t workspace_bytes);

// The heuristic's first choice, then every configuration enumerated from cublasLtMatmulAlgoGetIds and the
// capabilities (tiles, stages, split-K, reduction scheme, CTA swizzle, custom option, cluster shape) that
// passes check_algo, up to `cap` candidates. The checks run on every host core.
std::vector<GemmAlgo> exhaustive_candidates(cublasLtHandle_t h, const LtPlan& p, std::size_t workspace_bytes,
                                            int cap);

}  // namespace ab::cuda

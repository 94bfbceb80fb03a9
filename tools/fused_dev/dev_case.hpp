// The fused-kernel harness's problems: the awkward shapes `check` runs every tile on, as project Problems.
#pragma once
#include <cstdint>
#include <vector>

#include "core/problem.hpp"

namespace ab::fused_dev {

// A problem by its sizes; page_size 0 means contiguous K/V.
Problem dev_problem(int batch, int heads, int seq_len, int head_dim, int page_size, bool causal, DType dtype);

// An inference shape of the check list: page_size 0 means contiguous; kv_lens (one per sequence) makes it
// ragged, seq_len then being their maximum (0 here).
struct InferenceShape {
  int batch, heads, kv_heads, seq_len, q_len, page_size;
  std::vector<std::int64_t> kv_lens;
};
Problem dev_inference_problem(const InferenceShape& s, int head_dim, bool causal, DType dtype);
// The inference shapes of check_problems: GQA (KVH = H/4) and MQA, q_len < S and q_len = 1, B=1 H=1,
// ragged contiguous and paged (pages of 7, 16, 64 and 256).
const std::vector<InferenceShape>& inference_shapes();

// The shapes `fused_dev check` runs: B=3 H=5 S=1000 (contiguous and paged by 143) for D=64/128, fp16/bf16,
// causal and not; D=32/96/256, page size 1 and 5, S=1, 77, 129, 1537 and 2049; then each inference
// shape for D=64 and 128, causal and not.
std::vector<Problem> check_problems();

// Relative L2 tolerance of the dev loop, tighter than tolerance_for (the runner's): fp16 2e-3, bf16 1e-2.
double dev_tolerance(DType t);

}  // namespace ab::fused_dev

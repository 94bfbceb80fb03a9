// The fused-kernel harness's problems: the awkward shapes `check` runs every tile on, as project Problems.
#pragma once
#include <vector>

#include "core/problem.hpp"

namespace ab::fused_dev {

// A problem by its sizes; page_size 0 means contiguous K/V.
Problem dev_problem(int batch, int heads, int seq_len, int head_dim, int page_size, bool causal, DType dtype);

// The shapes `fused_dev check` runs: B=3 H=5 S=1000 (contiguous and paged by 143) for D=64/128, fp16/bf16,
// causal and not; D=32/96/256, page size 1 and 5, S=1, 77, 129, 1537 and 2049.
std::vector<Problem> check_problems();

// Relative L2 tolerance of the dev loop, tighter than tolerance_for (the runner's): fp16 2e-3, bf16 1e-2.
double dev_tolerance(DType t);

}  // namespace ab::fused_dev

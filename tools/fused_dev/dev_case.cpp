// The fused-kernel harness's problem list and tolerance.
#include "dev_case.hpp"

namespace ab::fused_dev {

Problem dev_problem(int batch, int heads, int seq_len, int head_dim, int page_size, bool causal, DType dtype) {
  if (page_size > 0) return make_problem(batch, heads, seq_len, head_dim, 0, page_size, KvLayout::paged, dtype, causal);
  return make_problem(batch, heads, seq_len, head_dim, 1, 0, KvLayout::contiguous, dtype, causal);
}

std::vector<Problem> check_problems() {
  std::vector<Problem> out;
  const DType f16 = DType::fp16, b16 = DType::bf16;
  for (int d : {64, 128})
    for (DType t : {f16, b16})
      for (bool causal : {false, true})
        for (int ps : {0, 143}) out.push_back(dev_problem(3, 5, 1000, d, ps, causal, t));  // 143: 7 pages
  for (bool causal : {false, true}) {
    out.push_back(dev_problem(1, 1, 77, 64, 16, causal, f16));
    out.push_back(dev_problem(1, 1, 77, 128, 16, causal, b16));
    out.push_back(dev_problem(2, 3, 300, 32, 16, causal, f16));
    out.push_back(dev_problem(2, 3, 300, 96, 16, causal, b16));
    out.push_back(dev_problem(2, 3, 300, 256, 16, causal, f16));
    out.push_back(dev_problem(2, 3, 300, 256, 0, causal, b16));
    out.push_back(dev_problem(1, 2, 1, 64, 0, causal, f16));
    out.push_back(dev_problem(2, 2, 129, 128, 1, causal, f16));  // page size 1
    out.push_back(dev_problem(2, 2, 200, 64, 5, causal, b16));   // odd page size
    out.push_back(dev_problem(1, 2, 2049, 128, 64, causal, f16));
    out.push_back(dev_problem(1, 3, 1537, 64, 16, causal, b16));
    // Contiguous K/V, the layout the warp-specialized (TMA) tiles take: B=1 H=1, a short last tile.
    out.push_back(dev_problem(1, 1, 77, 128, 0, causal, b16));
    out.push_back(dev_problem(1, 1, 77, 64, 0, causal, f16));
    out.push_back(dev_problem(1, 2, 2049, 128, 0, causal, f16));
    out.push_back(dev_problem(1, 3, 1537, 64, 0, causal, b16));
  }
  return out;
}

double dev_tolerance(DType t) { return t == DType::bf16 ? 1e-2 : 2e-3; }

}  // namespace ab::fused_dev

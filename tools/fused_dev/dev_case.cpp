// The fused-kernel harness's problem list and tolerance.
#include "dev_case.hpp"

#include <string>

namespace ab::fused_dev {

Problem dev_problem(int batch, int heads, int seq_len, int head_dim, int page_size, bool causal, DType dtype) {
  if (page_size > 0) return make_problem(batch, heads, seq_len, head_dim, 0, page_size, KvLayout::paged, dtype, causal);
  return make_problem(batch, heads, seq_len, head_dim, 1, 0, KvLayout::contiguous, dtype, causal);
}

Problem dev_inference_problem(const InferenceShape& s, int head_dim, bool causal, DType dtype) {
  ProblemSpec p;
  p.batch = s.batch;
  p.heads = s.heads;
  p.kv_heads = s.kv_heads;
  p.seq_len = s.kv_lens.empty() ? s.seq_len : 0;
  p.q_len = s.q_len;
  p.head_dim = head_dim;
  p.page_size = s.page_size > 0 ? s.page_size : 0;
  p.pages = s.page_size > 0 ? 0 : 1;
  p.kv_layout = s.page_size > 0 ? KvLayout::paged : KvLayout::contiguous;
  p.dtype = dtype;
  p.causal = causal;
  p.kv_lens = s.kv_lens;
  if (!s.kv_lens.empty()) {
    p.kv_lens_spec = "list:";
    for (std::size_t i = 0; i < s.kv_lens.size(); ++i) p.kv_lens_spec += (i ? "," : "") + std::to_string(s.kv_lens[i]);
  }
  return make_problem(p);
}

const std::vector<InferenceShape>& inference_shapes() {
  static const std::vector<InferenceShape> shapes = {
      {2, 8, 2, 1000, 1000, 0, {}},               // GQA (KVH = H/4), self-attention, contiguous
      {2, 4, 1, 777, 300, 16, {}},                // MQA, q_len < S, pages of 16 (TMA boxes in the ws tiles)
      {1, 1, 1, 1537, 200, 0, {}},                // B=1 H=1, q_len < S, neither a multiple of a tile
      {2, 8, 2, 1000, 1, 0, {}},                  // one query token
      {3, 4, 2, 0, 77, 0, {1000, 333, 77}},       // ragged contiguous (rows past each length: NaN)
      {3, 4, 1, 0, 64, 7, {500, 129, 64}},        // ragged, pages of 7 (cp.async in the ws tiles)
      {2, 8, 2, 0, 300, 64, {1000, 513}},         // ragged, pages of 64: a short last page
      {2, 4, 4, 1000, 1000, 256, {}},             // pages of 256 (several tiles per page)
  };
  return shapes;
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
    // A full persistent grid over many rounds (132 SMs: 576 to 1536 work units) on 128-row pages: the shape
    // where fused_dev bench hung in session 23 (docs/perf-notes.md); the small shapes above never fill the grid.
    out.push_back(dev_problem(32, 12, 512, 64, 128, causal, f16));
  }
  // Inference shapes: grouped KV heads, q_len < S (bottom-right causal), ragged lengths, paged; each in
  // both head dims and causal settings, fp16 and bf16 alternating.
  int i = 0;
  for (const InferenceShape& s : inference_shapes()) {
    for (int d : {64, 128})
      for (bool causal : {false, true}) out.push_back(dev_inference_problem(s, d, causal, (i + d / 64) % 2 ? b16 : f16));
    ++i;
  }
  return out;
}

double dev_tolerance(DType t) { return t == DType::bf16 ? 1e-2 : 2e-3; }

}  // namespace ab::fused_dev

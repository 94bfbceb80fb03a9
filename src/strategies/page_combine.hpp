// The page-local half shared by fully_batched and ptr_array: buffers for page-major probabilities,
// per-page partial outputs and statistics, and the softmax/combine launches around the P·V GEMM.
#pragma once
#include "strategies/strategy_common.hpp"

namespace ab {

struct PageCombineBuffers {
  void* probs = nullptr;      // [BH, P, S, ps] in the input dtype
  float* partial = nullptr;   // [BH, P, S, D]
  float* page_max = nullptr;  // [BH, P, S]
  float* page_sum = nullptr;

  static std::int64_t bytes(const Problem& p) {
    std::int64_t n = size_mul(p.bh(), p.pages, p.seq_len);
    return size_add(size_mul(n, p.page_size, dtype_size(p.dtype)), size_mul(n, p.head_dim, 4), size_mul(2, n, 4));
  }
  void allocate(Backend& be, Workspace& ws, const Problem& p) {
    std::int64_t n = p.bh() * p.pages * p.seq_len;
    probs = ws.add(be, n * p.page_size * static_cast<std::int64_t>(dtype_size(p.dtype)));
    partial = static_cast<float*>(ws.add(be, n * p.head_dim * 4));
    page_max = static_cast<float*>(ws.add(be, n * 4));
    page_sum = static_cast<float*>(ws.add(be, n * 4));
  }
  PageSoftmaxArgs softmax_args(const Problem& p, const void* scores, DType st, std::int64_t bh_stride,
                               std::int64_t page_stride, std::int64_t ld) const {
    PageSoftmaxArgs a;
    a.scores = scores; a.score_type = st;
    a.score_bh_stride = bh_stride; a.score_page_stride = page_stride; a.score_ld = ld;
    a.probs = probs; a.prob_type = p.dtype; a.page_max = page_max; a.page_sum = page_sum;
    a.bh_count = p.bh(); a.pages = p.pages; a.rows = p.seq_len; a.page_size = p.page_size;
    a.last_page_len = p.last_page_len(); a.mask.causal = p.causal;
    return a;
  }
  CombineArgs combine_args(const Problem& p, void* out) const {
    CombineArgs c;
    c.partial = partial; c.page_max = page_max; c.page_sum = page_sum;
    c.bh_count = p.bh(); c.pages = p.pages; c.rows = p.seq_len; c.head_dim = p.head_dim;
    c.out = out; c.out_type = p.dtype;
    return c;
  }
  // P·V for every (head, page): C[S, D] = P[S, ps] · V_page[ps, D], fp32 partial outputs.
  static GemmShape pv_shape(const Problem& p, BatchMode mode) {
    GemmShape g;
    g.m = p.seq_len; g.n = p.head_dim; g.k = p.page_size; g.b_trans = false;
    g.a_type = g.b_type = p.dtype; g.c_type = DType::fp32;
    g.lda = p.page_size; g.ldb = p.head_dim; g.ldc = p.head_dim;
    g.mode = mode; g.batch = p.bh() * p.pages;
    if (mode == BatchMode::strided) {
      g.stride_a = p.seq_len * p.page_size;
      g.stride_b = p.page_size * p.head_dim;
      g.stride_c = p.seq_len * p.head_dim;
    }
    return g;
  }
};

}  // namespace ab

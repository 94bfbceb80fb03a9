// The page-local half shared by fully_batched and ptr_array: buffers for page-major probabilities,
// per-page partial outputs and statistics, and the softmax/combine launches around the P·V GEMM. Items and
// rows follow QueryRows (a query head of q_len rows, or a packed group of g·q_len rows).
#pragma once
#include "strategies/strategy_common.hpp"

namespace ab {

struct PageCombineBuffers {
  void* probs = nullptr;      // [items, P, rows, ps] in the input dtype
  float* partial = nullptr;   // [items, P, rows, Dv]
  float* page_max = nullptr;  // [items, P, rows]
  float* page_sum = nullptr;
  QueryRows qr;
  KeyMask mask;

  static std::int64_t bytes(const Problem& p, const QueryRows& qr) {
    std::int64_t n = size_mul(qr.items, p.pages, qr.rows);
    return size_add(size_mul(n, p.page_size, dtype_size(p.dtype)), size_mul(n, p.head_dim_v, 4), size_mul(2, n, 4));
  }
  void allocate(Backend& be, Workspace& ws, const Problem& p, const QueryRows& rows, const KeyMask& m) {
    qr = rows;
    mask = m;
    std::int64_t n = qr.items * p.pages * qr.rows;
    probs = ws.add(be, n * p.page_size * static_cast<std::int64_t>(dtype_size(p.dtype)));
    partial = static_cast<float*>(ws.add(be, n * p.head_dim_v * 4));
    page_max = static_cast<float*>(ws.add(be, n * 4));
    page_sum = static_cast<float*>(ws.add(be, n * 4));
  }
  PageSoftmaxArgs softmax_args(const Problem& p, const void* scores, DType st, std::int64_t bh_stride,
                               std::int64_t page_stride, std::int64_t ld) const {
    PageSoftmaxArgs a;
    a.scores = scores; a.score_type = st;
    a.score_bh_stride = bh_stride; a.score_page_stride = page_stride; a.score_ld = ld;
    a.probs = probs; a.prob_type = p.dtype; a.page_max = page_max; a.page_sum = page_sum;
    a.bh_count = qr.items; a.pages = p.pages; a.rows = qr.rows; a.page_size = p.page_size;
    a.last_page_len = p.last_page_len(); a.mask = mask;
    return a;
  }
  CombineArgs combine_args(const Problem& p, const AttentionIO& io) const {
    CombineArgs c;
    c.partial = partial; c.page_max = page_max; c.page_sum = page_sum;
    c.bh_count = qr.items; c.pages = p.pages; c.rows = qr.rows; c.head_dim = p.head_dim_v;
    c.out = io.o; c.out_type = p.dtype;
    c.sinks = softmax_sinks(p, io, qr);
    return c;
  }
  // P·V for every (item, page): C[rows, Dv] = P[rows, ps] · V_page[ps, Dv], fp32 partial outputs.
  GemmShape pv_shape(const Problem& p, BatchMode mode) const {
    const std::int64_t Dv = p.head_dim_v;
    GemmShape g;
    g.m = qr.rows; g.n = Dv; g.k = p.page_size; g.b_trans = false;
    g.a_type = g.b_type = p.dtype; g.c_type = DType::fp32;
    g.lda = p.page_size; g.ldb = Dv; g.ldc = Dv;
    g.mode = mode; g.batch = qr.items * p.pages;
    if (mode == BatchMode::strided) {
      g.stride_a = qr.rows * p.page_size;
      g.stride_b = p.page_size * Dv;
      g.stride_c = qr.rows * Dv;
    }
    return g;
  }
};

}  // namespace ab

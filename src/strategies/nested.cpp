// `nested`: one cuBLASLt call per (batch, head, page) for Q·K^T and for P·V, an online-softmax update per
// (batch, head, page), one finalize. The seed's baseline, where launch overhead dominates.
#include <fmt/format.h>

#include "strategies/strategy_common.hpp"
#include "strategies/strategies.hpp"

namespace ab {

namespace {

class Nested : public Strategy {
 public:
  std::string name() const override { return "nested"; }
  std::string description() const override { return "one GEMM per batch, head and page; online softmax per page"; }
  LaunchContract contract(const Problem& p) const override {
    return {2 * p.bh() * p.pages, p.bh() * p.pages + 1, "2·B·H·P gemm + B·H·P softmax + 1 finalize"};
  }
  std::string can_implement(const Problem& p, const Backend&, const StrategyOptions&) const override {
    if (p.bh() * p.pages > 2000000) return fmt::format("{} GEMM pairs is beyond what a nested loop should launch", p.bh() * p.pages);
    return inference_shape_gap(p);
  }
  std::int64_t workspace_bytes(const Problem& p, const StrategyOptions& opt) const override {
    std::int64_t tile = size_mul(p.seq_len, p.page_size);
    return size_add(size_mul(tile, dtype_size(score_type(p, opt)) + dtype_size(p.dtype)),
                    size_mul(p.bh(), p.seq_len, p.head_dim + 2, 4));
  }
  void setup(Backend& be, const Problem& p, const AttentionIO& io, const StrategyOptions& opt) override {
    p_ = p;
    io_ = io;
    st_ = score_type(p, opt);
    std::int64_t S = p.seq_len, D = p.head_dim;
    scores_ = ws_.add(be, S * p.page_size * static_cast<std::int64_t>(dtype_size(st_)));
    probs_ = ws_.add(be, S * p.page_size * static_cast<std::int64_t>(dtype_size(p.dtype)));
    acc_ = static_cast<float*>(ws_.add(be, p.bh() * S * D * 4));
    row_max_ = static_cast<float*>(ws_.add(be, p.bh() * S * 4));
    row_sum_ = static_cast<float*>(ws_.add(be, p.bh() * S * 4));
    // Plans for a full page and, if it differs, the short last page.
    PagePlans qk_plans, pv_plans;  // locals first: a setup that fails half-way releases what it made
    for (int last = 0; last < 2; ++last) {
      std::int64_t len = last ? p.last_page_len() : p.page_size;
      GemmShape qk;
      qk.m = S; qk.n = len; qk.k = D; qk.b_trans = true;
      qk.a_type = qk.b_type = p.dtype; qk.c_type = st_;
      qk.lda = D; qk.ldb = D; qk.ldc = len;
      GemmShape pv;
      pv.m = S; pv.n = D; pv.k = len; pv.b_trans = false;
      pv.a_type = pv.b_type = p.dtype; pv.c_type = DType::fp32;
      pv.lda = len; pv.ldb = D; pv.ldc = D;
      if (!(last && len == p.page_size)) {  // else the full page's plans serve the last page
        qk_plans.plan[last] = be.gemm().make_plan(qk);
        pv_plans.plan[last] = be.gemm().make_plan(pv);
      }
    }
    qk_plan_ = std::move(qk_plans);
    pv_plan_ = std::move(pv_plans);
  }
  void run(Backend& be) override {
    const Problem& p = p_;
    std::int64_t S = p.seq_len, D = p.head_dim;
    ScopedRange loop(be.profiler(), "per (b,h,p): QK^T, softmax update, PV");
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads; ++h) {
        std::int64_t bh = b * p.heads + h;
        const void* q = offset_ptr(io_.q, bh * S * D, p.dtype);
        for (std::int64_t pg = 0; pg < p.pages; ++pg) {
          int last = pg == p.pages - 1 ? 1 : 0;
          std::int64_t len = p.longest_page_len(pg);
          be.gemm().run(qk_plan_.use(last), q, kv_page_ptr(p, io_, io_.k, b, h, pg), scores_, p.scale(), 0.0f);
          SoftmaxUpdateArgs s;
          s.scores = scores_; s.score_type = st_; s.score_ld = len; s.score_bh_stride = S * len;
          s.probs = probs_; s.prob_type = p.dtype; s.prob_ld = len; s.prob_bh_stride = S * len;
          s.row_max = row_max_ + bh * S; s.row_sum = row_sum_ + bh * S; s.acc = acc_ + bh * S * D;
          s.bh_count = 1; s.rows = S; s.cols = len; s.head_dim = D;
          s.col_offset = pg * p.page_size; s.first_page = pg == 0; s.mask.causal = p.causal;
          be.kernels().softmax_update(s);
          be.gemm().run(pv_plan_.use(last), probs_, kv_page_ptr(p, io_, io_.v, b, h, pg), acc_ + bh * S * D, 1.0f,
                  pg == 0 ? 0.0f : 1.0f);
        }
      }
    ScopedRange fin(be.profiler(), "finalize");
    FinalizeArgs f;
    f.acc = acc_; f.row_sum = row_sum_; f.bh_count = p.bh(); f.rows = S; f.head_dim = D;
    f.out = io_.o; f.out_type = p.dtype;
    be.kernels().finalize(f);
  }
  void teardown(Backend&) override {
    qk_plan_.reset();
    pv_plan_.reset();
    ws_.clear();
  }
  StrategyConfig config() const override { return gemm_strategy_config(st_, false); }

 private:
  Problem p_;
  AttentionIO io_;
  DType st_ = DType::fp32;
  Workspace ws_;
  void* scores_ = nullptr;
  void* probs_ = nullptr;
  float* acc_ = nullptr;
  float* row_max_ = nullptr;
  float* row_sum_ = nullptr;
  PagePlans qk_plan_, pv_plan_;
};

}  // namespace

std::unique_ptr<Strategy> make_nested() { return std::make_unique<Nested>(); }

}  // namespace ab

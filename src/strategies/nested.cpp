// `nested`: one cuBLASLt call per (item, page) for Q·K^T and for P·V, an online-softmax update per
// (item, page), one finalize. The seed's baseline, where launch overhead dominates. An item is a query head,
// or with GQA packing the group of query heads sharing a KV head; K/V pointers follow each head's KV head,
// and each sequence runs only its own pages (a ragged batch's real lengths).
#include <fmt/format.h>

#include "strategies/strategy_common.hpp"
#include "strategies/strategies.hpp"

namespace ab {

namespace {

class Nested : public Strategy {
 public:
  std::string name() const override { return "nested"; }
  std::string description() const override { return "one GEMM per batch, head and page; online softmax per page"; }
  LaunchContract contract(const Problem& p, const StrategyOptions& opt) const override {
    return contract_for(p, query_rows(p, opt));
  }
  // The window and soft-cap ride in the key mask its softmax primitives (or fused kernel) apply.
  std::vector<std::string> runs_variants() const override { return softmax_variants(); }
  std::string can_implement(const Problem& p, const Backend&, const StrategyOptions& opt) const override {
    std::int64_t n = page_products(p, query_rows(p, opt));
    if (n > 2000000) return fmt::format("{} GEMM pairs is beyond what a nested loop should launch", n);
    return "";
  }
  std::int64_t workspace_bytes(const Problem& p, const StrategyOptions& opt) const override {
    QueryRows qr = query_rows(p, opt);
    std::int64_t tile = size_mul(qr.rows, p.page_size);
    return size_add(size_mul(tile, dtype_size(score_type(p, opt)) + dtype_size(p.dtype)),
                    size_mul(p.bh(), p.q_len, p.head_dim_v + 2, 4));
  }
  void setup(Backend& be, const Problem& p, const AttentionIO& io, const StrategyOptions& opt) override {
    p_ = p;
    io_ = io;
    st_ = score_type(p, opt);
    qr_ = query_rows(p, opt);
    mask_ = key_mask(p, io, qr_);
    const std::int64_t R = qr_.rows, D = p.head_dim, Dv = p.head_dim_v, all_rows = p.bh() * p.q_len;
    scores_ = ws_.add(be, R * p.page_size * static_cast<std::int64_t>(dtype_size(st_)));
    probs_ = ws_.add(be, R * p.page_size * static_cast<std::int64_t>(dtype_size(p.dtype)));
    acc_ = static_cast<float*>(ws_.add(be, all_rows * Dv * 4));
    row_max_ = static_cast<float*>(ws_.add(be, all_rows * 4));
    row_sum_ = static_cast<float*>(ws_.add(be, all_rows * 4));
    // Plans for a full page and, when the batch is even and its last page short, that page. A ragged
    // batch's pages all run full size: the keys past a sequence's end are read (they exist: zeros in a
    // pool page, the next rows or the slack rows of contiguous K/V) and masked.
    PagePlans qk_plans, pv_plans;  // locals first: a setup that fails half-way releases what it made
    for (int last = 0; last < 2; ++last) {
      std::int64_t len = last ? p.last_page_len() : p.page_size;
      if (last && (len == p.page_size || p.ragged())) break;  // the full page's plans serve every page
      GemmShape qk;
      qk.m = R; qk.n = len; qk.k = D; qk.b_trans = true;
      qk.a_type = qk.b_type = p.dtype; qk.c_type = st_;
      qk.lda = D; qk.ldb = D; qk.ldc = len;
      GemmShape pv;
      pv.m = R; pv.n = Dv; pv.k = len; pv.b_trans = false;
      pv.a_type = pv.b_type = p.dtype; pv.c_type = DType::fp32;
      pv.lda = len; pv.ldb = Dv; pv.ldc = Dv;
      qk_plans.plan[last] = be.gemm().make_plan(qk);
      pv_plans.plan[last] = be.gemm().make_plan(pv);
    }
    qk_plan_ = std::move(qk_plans);
    pv_plan_ = std::move(pv_plans);
  }
  void run(Backend& be) override {
    const Problem& p = p_;
    const std::int64_t R = qr_.rows, D = p.head_dim, Dv = p.head_dim_v;
    ScopedRange loop(be.profiler(), "per (item, page): QK^T, softmax update, PV");
    for (std::int64_t item = 0; item < qr_.items; ++item) {
      const std::int64_t b = item / qr_.items_per_seq, kvh = qr_.kv_item(item) % p.kv_heads;
      const void* q = offset_ptr(io_.q, item * R * D, p.dtype);
      float* acc = acc_ + item * R * Dv;
      const std::int64_t pages = p.pages_of(b);
      for (std::int64_t pg = 0; pg < pages; ++pg) {
        const int last = !p.ragged() && pg == p.pages - 1 ? 1 : 0;
        const std::int64_t len = p.ragged() ? p.page_size : p.longest_page_len(pg);
        be.gemm().run(qk_plan_.use(last), q, k_page_ptr(p, io_, b, kvh, pg), scores_, p.scale(), 0.0f);
        SoftmaxUpdateArgs s;
        s.scores = scores_; s.score_type = st_; s.score_ld = len; s.score_bh_stride = R * len;
        s.probs = probs_; s.prob_type = p.dtype; s.prob_ld = len; s.prob_bh_stride = R * len;
        s.row_max = row_max_ + item * R; s.row_sum = row_sum_ + item * R; s.acc = acc;
        s.bh_count = 1; s.rows = R; s.cols = len; s.head_dim = Dv;
        s.col_offset = pg * p.page_size; s.first_page = pg == 0;
        s.mask = mask_;
        s.mask.item0 = item;
        be.kernels().softmax_update(s);
        be.gemm().run(pv_plan_.use(last), probs_, v_page_ptr(p, io_, b, kvh, pg), acc, 1.0f,
                      pg == 0 ? 0.0f : 1.0f);
      }
    }
    ScopedRange fin(be.profiler(), "finalize");
    FinalizeArgs f;
    f.acc = acc_; f.row_sum = row_sum_; f.row_max = row_max_; f.bh_count = qr_.items; f.rows = R; f.head_dim = Dv;
    f.out = io_.o; f.out_type = p.dtype; f.sinks = softmax_sinks(p, io_, qr_);
    be.kernels().finalize(f);
  }
  void teardown(Backend&) override {
    qk_plan_.reset();
    pv_plan_.reset();
    ws_.clear();
  }
  StrategyConfig config() const override { return gemm_strategy_config(st_, false, qr_); }

 private:
  static LaunchContract contract_for(const Problem& p, const QueryRows& qr) {
    const std::int64_t n = page_products(p, qr);
    std::string per = qr.packed ? "B·KVH" : "B·H";
    std::string pages = p.ragged() ? "Σ pages" : "P";
    return {2 * n, n + 1, fmt::format("2·{}·{} gemm + {}·{} softmax + 1 finalize", per, pages, per, pages)};
  }
  Problem p_;
  AttentionIO io_;
  DType st_ = DType::fp32;
  QueryRows qr_;
  KeyMask mask_;
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

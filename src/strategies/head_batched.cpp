// `head_batched`: per page, one strided-batched GEMM over every item for Q·K^T and one for P·V, one
// online-softmax update over all items, one finalize (seed 001's MVP). An item is a query head, or with GQA
// packing the group of query heads sharing a KV head (g·q_len rows of one GEMM). A strided batch cannot
// follow a block table or send several query heads to one KV head, so paged KV is gathered first, and
// unpacked grouped heads get K/V broadcast to every query head (one gather kernel either way). A ragged
// batch is padded to its longest sequence and the padding masked.
#include <fmt/format.h>

#include "strategies/strategy_common.hpp"
#include "strategies/strategies.hpp"

namespace ab {

namespace {

// K/V heads a gather produces: KVH, or H when K/V are broadcast to every query head; 0 when no gather runs.
std::int64_t head_batched_gathered_heads(const Problem& p, const QueryRows& qr) {
  if (qr.group > 1) return p.heads;
  return p.kv_layout == KvLayout::paged ? p.kv_heads : 0;
}

class HeadBatched : public Strategy {
 public:
  std::string name() const override { return "head_batched"; }
  std::string description() const override { return "per page: strided-batched GEMMs over B·H heads"; }
  LaunchContract contract(const Problem& p, const StrategyOptions& opt) const override {
    QueryRows qr = query_rows(p, opt);
    const std::int64_t gh = head_batched_gathered_heads(p, qr);
    std::string gather = gh == 0 ? "" : qr.group > 1 ? " + 1 gather (K/V broadcast per query head)" : " + 1 gather";
    return {2 * p.pages, p.pages + 1 + (gh ? 1 : 0),
            fmt::format("2·P gemm + P softmax + 1 finalize{}", gather)};
  }
  // The window and soft-cap ride in the key mask its softmax primitives (or fused kernel) apply.
  std::vector<std::string> runs_variants() const override { return softmax_variants(); }
  std::string can_implement(const Problem&, const Backend&, const StrategyOptions&) const override { return ""; }
  std::int64_t workspace_bytes(const Problem& p, const StrategyOptions& opt) const override {
    QueryRows qr = query_rows(p, opt);
    std::int64_t tile = size_mul(qr.items, qr.rows, p.page_size);
    std::int64_t w = size_add(size_mul(tile, dtype_size(score_type(p, opt)) + dtype_size(p.dtype)),
                              size_mul(p.bh(), p.q_len, p.head_dim_v + 2, 4));
    const std::int64_t gh = head_batched_gathered_heads(p, qr);
    return size_add(w, gh ? gathered_kv_bytes(p, gh) : 0);
  }
  void setup(Backend& be, const Problem& p, const AttentionIO& io, const StrategyOptions& opt) override {
    p_ = p;
    io_ = io;
    st_ = score_type(p, opt);
    qr_ = query_rows(p, opt);
    mask_ = key_mask(p, io, qr_);
    const std::int64_t gh = head_batched_gathered_heads(p, qr_);
    gather_ = gh != 0;
    const std::int64_t R = qr_.rows, D = p.head_dim, Dv = p.head_dim_v, N = qr_.items;
    scores_ = ws_.add(be, N * R * p.page_size * static_cast<std::int64_t>(dtype_size(st_)));
    probs_ = ws_.add(be, N * R * p.page_size * static_cast<std::int64_t>(dtype_size(p.dtype)));
    acc_ = static_cast<float*>(ws_.add(be, N * R * Dv * 4));
    row_max_ = static_cast<float*>(ws_.add(be, N * R * 4));
    row_sum_ = static_cast<float*>(ws_.add(be, N * R * 4));
    k_ = io.k;
    v_ = io.v;
    kv_rows_ = p.seq_len;
    if (gather_) {
      void* kg = ws_.add(be, gathered_bytes(p, gh, D));
      void* vg = ws_.add(be, gathered_bytes(p, gh, Dv));
      gather_args_ = make_gather_args(p, io, kg, vg, qr_.group);
      k_ = kg;
      v_ = vg;
      kv_rows_ = p.padded_seq();
    }
    PagePlans qk_plans, pv_plans;  // locals first: a setup that fails half-way releases what it made
    for (int last = 0; last < 2; ++last) {
      std::int64_t len = last ? p.last_page_len() : p.page_size;
      if (last && len == p.page_size) break;  // the full page's plans serve the last page
      GemmShape qk;
      qk.m = R; qk.n = len; qk.k = D; qk.b_trans = true;
      qk.a_type = qk.b_type = p.dtype; qk.c_type = st_;
      qk.lda = D; qk.ldb = D; qk.ldc = len;
      qk.mode = BatchMode::strided; qk.batch = N;
      qk.stride_a = R * D; qk.stride_b = kv_rows_ * D; qk.stride_c = R * len;
      GemmShape pv;
      pv.m = R; pv.n = Dv; pv.k = len; pv.b_trans = false;
      pv.a_type = pv.b_type = p.dtype; pv.c_type = DType::fp32;
      pv.lda = len; pv.ldb = Dv; pv.ldc = Dv;
      pv.mode = BatchMode::strided; pv.batch = N;
      pv.stride_a = R * len; pv.stride_b = kv_rows_ * Dv; pv.stride_c = R * Dv;
      qk_plans.plan[last] = be.gemm().make_plan(qk);
      pv_plans.plan[last] = be.gemm().make_plan(pv);
    }
    qk_plan_ = std::move(qk_plans);
    pv_plan_ = std::move(pv_plans);
  }
  void run(Backend& be) override {
    const Problem& p = p_;
    const std::int64_t R = qr_.rows, D = p.head_dim, Dv = p.head_dim_v, N = qr_.items;
    if (gather_) {
      ScopedRange r(be.profiler(), qr_.group > 1 ? "gather pages, K/V per query head" : "gather pages");
      be.kernels().gather_pages(gather_args_);
    }
    for (std::int64_t pg = 0; pg < p.pages; ++pg) {
      ScopedRange page(be.profiler(), "page: QK^T, softmax update, PV");
      int last = pg == p.pages - 1 ? 1 : 0;
      std::int64_t len = p.longest_page_len(pg);
      std::int64_t row0 = pg * p.page_size;
      be.gemm().run(qk_plan_.use(last), io_.q, offset_ptr(k_, row0 * D, p.dtype), scores_, p.scale(), 0.0f);
      SoftmaxUpdateArgs s;
      s.scores = scores_; s.score_type = st_; s.score_ld = len; s.score_bh_stride = R * len;
      s.probs = probs_; s.prob_type = p.dtype; s.prob_ld = len; s.prob_bh_stride = R * len;
      s.row_max = row_max_; s.row_sum = row_sum_; s.acc = acc_;
      s.bh_count = N; s.rows = R; s.cols = len; s.head_dim = Dv;
      s.col_offset = row0; s.first_page = pg == 0; s.mask = mask_;
      be.kernels().softmax_update(s);
      be.gemm().run(pv_plan_.use(last), probs_, offset_ptr(v_, row0 * Dv, p.dtype), acc_, 1.0f, pg == 0 ? 0.0f : 1.0f);
    }
    ScopedRange fin(be.profiler(), "finalize");
    FinalizeArgs f;
    f.acc = acc_; f.row_sum = row_sum_; f.row_max = row_max_; f.bh_count = N; f.rows = R; f.head_dim = Dv;
    f.out = io_.o; f.out_type = p.dtype; f.sinks = softmax_sinks(p, io_, qr_);
    be.kernels().finalize(f);
  }
  void teardown(Backend&) override {
    qk_plan_.reset();
    pv_plan_.reset();
    ws_.clear();
  }
  StrategyConfig config() const override {
    return gemm_strategy_config(st_, gather_, qr_, p_.ragged() ? std::optional<double>(p_.padded_fraction()) : std::nullopt);
  }

 private:
  Problem p_;
  AttentionIO io_;
  DType st_ = DType::fp32;
  QueryRows qr_;
  KeyMask mask_;
  bool gather_ = false;
  GatherArgs gather_args_;
  Workspace ws_;
  const void* k_ = nullptr;
  const void* v_ = nullptr;
  std::int64_t kv_rows_ = 0;
  void* scores_ = nullptr;
  void* probs_ = nullptr;
  float* acc_ = nullptr;
  float* row_max_ = nullptr;
  float* row_sum_ = nullptr;
  PagePlans qk_plan_, pv_plan_;
};

}  // namespace

std::unique_ptr<Strategy> make_head_batched() { return std::make_unique<HeadBatched>(); }

}  // namespace ab

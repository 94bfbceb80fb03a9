// `fully_batched`: one strided-batched Q·K^T over B·H whose N spans every page (the B·H·P page products
// are column blocks of one score matrix), one page-local softmax, one strided-batched P·V over B·H·P, one
// combine across pages. A short last page is padded to page_size and paged KV gathered (one kernel).
#include "strategies/page_combine.hpp"
#include "strategies/strategies.hpp"

namespace ab {

namespace {

bool needs_gather(const Problem& p) {
  return p.kv_layout == KvLayout::paged || p.padded_seq() != p.seq_len;
}

class FullyBatched : public Strategy {
 public:
  std::string name() const override { return "fully_batched"; }
  std::string description() const override { return "one strided GEMM each over all heads and pages, page combine"; }
  LaunchContract contract(const Problem& p) const override {
    bool g = needs_gather(p);
    return {2, g ? 3 : 2, g ? "2 gemm + softmax + combine + 1 gather/pad" : "2 gemm + softmax + combine"};
  }
  std::string can_implement(const Problem& p, const Backend&, const StrategyOptions&) const override {
    return inference_shape_gap(p);
  }
  std::int64_t workspace_bytes(const Problem& p, const StrategyOptions& opt) const override {
    std::int64_t scores = size_mul(p.bh(), p.seq_len, p.padded_seq(), dtype_size(score_type(p, opt)));
    return size_add(scores, PageCombineBuffers::bytes(p), needs_gather(p) ? gathered_kv_bytes(p) : 0);
  }
  void setup(Backend& be, const Problem& p, const AttentionIO& io, const StrategyOptions& opt) override {
    p_ = p;
    io_ = io;
    st_ = score_type(p, opt);
    gather_ = needs_gather(p);
    std::int64_t S = p.seq_len, D = p.head_dim, BH = p.bh(), Sp = p.padded_seq();
    scores_ = ws_.add(be, BH * S * Sp * static_cast<std::int64_t>(dtype_size(st_)));
    pc_.allocate(be, ws_, p);
    k_ = io.k;
    v_ = io.v;
    if (gather_) {
      std::int64_t half = gathered_kv_bytes(p) / 2;
      void* kg = ws_.add(be, half);
      void* vg = ws_.add(be, half);
      gather_args_ = make_gather_args(p, io, kg, vg);
      k_ = kg;
      v_ = vg;
    }
    GemmShape qk;
    qk.m = S; qk.n = Sp; qk.k = D; qk.b_trans = true;
    qk.a_type = qk.b_type = p.dtype; qk.c_type = st_;
    qk.lda = D; qk.ldb = D; qk.ldc = Sp;
    qk.mode = BatchMode::strided; qk.batch = BH;
    qk.stride_a = S * D; qk.stride_b = Sp * D; qk.stride_c = S * Sp;
    // Made into locals first: a setup that fails half-way releases what it made.
    GemmPlan qk_plan = be.gemm().make_plan(qk);
    GemmPlan pv_plan = be.gemm().make_plan(PageCombineBuffers::pv_shape(p, BatchMode::strided));
    qk_plan_ = std::move(qk_plan);
    pv_plan_ = std::move(pv_plan);
  }
  void run(Backend& be) override {
    const Problem& p = p_;
    std::int64_t S = p.seq_len, Sp = p.padded_seq();
    if (gather_) {
      ScopedRange r(be.profiler(), "gather/pad pages");
      be.kernels().gather_pages(gather_args_);
    }
    {
      ScopedRange r(be.profiler(), "QK^T");
      be.gemm().run(qk_plan_, io_.q, k_, scores_, p.scale(), 0.0f);
    }
    {
      ScopedRange r(be.profiler(), "page softmax");
      be.kernels().page_softmax(pc_.softmax_args(p, scores_, st_, S * Sp, p.page_size, Sp));
    }
    {
      ScopedRange r(be.profiler(), "PV");
      be.gemm().run(pv_plan_, pc_.probs, v_, pc_.partial, 1.0f, 0.0f);
    }
    ScopedRange r(be.profiler(), "combine pages");
    be.kernels().combine_pages(pc_.combine_args(p, io_.o));
  }
  void teardown(Backend&) override {
    qk_plan_.reset();
    pv_plan_.reset();
    ws_.clear();
  }
  StrategyConfig config() const override { return gemm_strategy_config(st_, gather_); }

 private:
  Problem p_;
  AttentionIO io_;
  DType st_ = DType::fp32;
  bool gather_ = false;
  GatherArgs gather_args_;
  Workspace ws_;
  PageCombineBuffers pc_;
  const void* k_ = nullptr;
  const void* v_ = nullptr;
  void* scores_ = nullptr;
  GemmPlan qk_plan_, pv_plan_;
};

}  // namespace

std::unique_ptr<Strategy> make_fully_batched() { return std::make_unique<FullyBatched>(); }

}  // namespace ab

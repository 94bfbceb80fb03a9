// `fully_batched`: one strided-batched Q·K^T over every item whose N spans every page (the item×page
// products are column blocks of one score matrix), one page-local softmax, one strided-batched P·V over
// items×pages, one combine across pages. An item is a query head, or with GQA packing the group of query
// heads sharing a KV head. A short last page is padded to page_size, paged KV gathered, and unpacked grouped
// heads get K/V broadcast to every query head (one gather kernel); a ragged batch is padded to its longest
// sequence and the padding masked.
#include <fmt/format.h>

#include "strategies/page_combine.hpp"
#include "strategies/strategies.hpp"

namespace ab {

namespace {

// K/V heads the gather writes (KVH, or H when broadcast); 0 when the inputs serve as they are.
std::int64_t fully_batched_gathered_heads(const Problem& p, const QueryRows& qr) {
  if (qr.group > 1) return p.heads;
  return p.kv_layout == KvLayout::paged || p.padded_seq() != p.seq_len ? p.kv_heads : 0;
}

class FullyBatched : public Strategy {
 public:
  std::string name() const override { return "fully_batched"; }
  std::string description() const override { return "one strided GEMM each over all heads and pages, page combine"; }
  LaunchContract contract(const Problem& p, const StrategyOptions& opt) const override {
    QueryRows qr = query_rows(p, opt);
    const std::int64_t gh = fully_batched_gathered_heads(p, qr);
    std::string gather = gh == 0 ? "" : qr.group > 1 ? " + 1 gather (K/V broadcast per query head)" : " + 1 gather/pad";
    return {2, gh ? 3 : 2, fmt::format("2 gemm + softmax + combine{}", gather)};
  }
  // The window and soft-cap ride in the key mask its softmax primitives (or fused kernel) apply.
  std::vector<std::string> runs_variants() const override { return softmax_variants(); }
  std::string can_implement(const Problem&, const Backend&, const StrategyOptions&) const override { return ""; }
  std::int64_t workspace_bytes(const Problem& p, const StrategyOptions& opt) const override {
    QueryRows qr = query_rows(p, opt);
    std::int64_t scores = size_mul(qr.items, qr.rows, p.padded_seq(), dtype_size(score_type(p, opt)));
    const std::int64_t gh = fully_batched_gathered_heads(p, qr);
    return size_add(scores, PageCombineBuffers::bytes(p, qr), gh ? gathered_kv_bytes(p, gh) : 0);
  }
  void setup(Backend& be, const Problem& p, const AttentionIO& io, const StrategyOptions& opt) override {
    p_ = p;
    io_ = io;
    st_ = score_type(p, opt);
    qr_ = query_rows(p, opt);
    const std::int64_t gh = fully_batched_gathered_heads(p, qr_);
    gather_ = gh != 0;
    const std::int64_t R = qr_.rows, D = p.head_dim, N = qr_.items, Sp = p.padded_seq();
    scores_ = ws_.add(be, N * R * Sp * static_cast<std::int64_t>(dtype_size(st_)));
    pc_.allocate(be, ws_, p, qr_, key_mask(p, io, qr_));
    k_ = io.k;
    v_ = io.v;
    if (gather_) {
      void* kg = ws_.add(be, gathered_bytes(p, gh, p.head_dim));
      void* vg = ws_.add(be, gathered_bytes(p, gh, p.head_dim_v));
      gather_args_ = make_gather_args(p, io, kg, vg, qr_.group);
      k_ = kg;
      v_ = vg;
    }
    GemmShape qk;
    qk.m = R; qk.n = Sp; qk.k = D; qk.b_trans = true;
    qk.a_type = qk.b_type = p.dtype; qk.c_type = st_;
    qk.lda = D; qk.ldb = D; qk.ldc = Sp;
    qk.mode = BatchMode::strided; qk.batch = N;
    qk.stride_a = R * D; qk.stride_b = Sp * D; qk.stride_c = R * Sp;
    // Made into locals first: a setup that fails half-way releases what it made.
    GemmPlan qk_plan = be.gemm().make_plan(qk);
    GemmPlan pv_plan = be.gemm().make_plan(pc_.pv_shape(p, BatchMode::strided));
    qk_plan_ = std::move(qk_plan);
    pv_plan_ = std::move(pv_plan);
  }
  void run(Backend& be) override {
    const Problem& p = p_;
    const std::int64_t R = qr_.rows, Sp = p.padded_seq();
    if (gather_) {
      ScopedRange r(be.profiler(), qr_.group > 1 ? "gather/pad pages, K/V per query head" : "gather/pad pages");
      be.kernels().gather_pages(gather_args_);
    }
    {
      ScopedRange r(be.profiler(), "QK^T");
      be.gemm().run(qk_plan_, io_.q, k_, scores_, p.scale(), 0.0f);
    }
    {
      ScopedRange r(be.profiler(), "page softmax");
      be.kernels().page_softmax(pc_.softmax_args(p, scores_, st_, R * Sp, p.page_size, Sp));
    }
    {
      ScopedRange r(be.profiler(), "PV");
      be.gemm().run(pv_plan_, pc_.probs, v_, pc_.partial, 1.0f, 0.0f);
    }
    ScopedRange r(be.profiler(), "combine pages");
    be.kernels().combine_pages(pc_.combine_args(p, io_));
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

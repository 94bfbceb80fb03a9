// `ptr_array`: cuBLASLt pointer-array batching over B·H·P, one call for Q·K^T and one for P·V, reading KV
// pages wherever they sit in the pool (seed 000's strategy B), then a page-local softmax and a combine.
// Every page is treated as full size; the short last page's extra keys are masked (contiguous K/V carry
// zeroed slack rows so the over-read stays in bounds).
#include "strategies/page_combine.hpp"
#include "strategies/strategies.hpp"

namespace ab {

namespace {

class PtrArray : public Strategy {
 public:
  std::string name() const override { return "ptr_array"; }
  std::string description() const override { return "pointer-array batched GEMMs over every (head, page) in the pool"; }
  LaunchContract contract(const Problem&) const override { return {2, 2, "2 gemm + softmax + combine"}; }
  std::string can_implement(const Problem& p, const Backend&, const StrategyOptions&) const override {
    return inference_shape_gap(p);
  }
  std::int64_t workspace_bytes(const Problem& p, const StrategyOptions& opt) const override {
    std::int64_t n = size_mul(p.bh(), p.pages);
    return size_add(size_mul(n, p.seq_len, p.page_size, dtype_size(score_type(p, opt))),
                    PageCombineBuffers::bytes(p), size_mul(6, n, 8));
  }
  void setup(Backend& be, const Problem& p, const AttentionIO& io, const StrategyOptions& opt) override {
    p_ = p;
    io_ = io;
    st_ = score_type(p, opt);
    std::int64_t S = p.seq_len, D = p.head_dim, ps = p.page_size, n = p.bh() * p.pages;
    scores_ = ws_.add(be, n * S * ps * static_cast<std::int64_t>(dtype_size(st_)));
    pc_.allocate(be, ws_, p);
    std::vector<const void*> qa(n), ka(n), sc(n), pa(n), va(n), oa(n);
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads; ++h)
        for (std::int64_t pg = 0; pg < p.pages; ++pg) {
          std::int64_t bh = b * p.heads + h, i = bh * p.pages + pg;
          qa[i] = offset_ptr(io.q, bh * S * D, p.dtype);
          ka[i] = kv_page_ptr(p, io, io.k, b, h, pg);
          va[i] = kv_page_ptr(p, io, io.v, b, h, pg);
          sc[i] = offset_ptr(scores_, i * S * ps, st_);
          pa[i] = offset_ptr(pc_.probs, i * S * ps, p.dtype);
          oa[i] = pc_.partial + i * S * D;
        }
    auto upload = [&](const std::vector<const void*>& v) {
      void* d = ws_.add(be, static_cast<std::int64_t>(v.size() * sizeof(void*)));
      be.memory().upload(d, v.data(), v.size() * sizeof(void*));
      return d;
    };
    q_ptrs_ = upload(qa); k_ptrs_ = upload(ka); s_ptrs_ = upload(sc);
    p_ptrs_ = upload(pa); v_ptrs_ = upload(va); o_ptrs_ = upload(oa);
    GemmShape qk;
    qk.m = S; qk.n = ps; qk.k = D; qk.b_trans = true;
    qk.a_type = qk.b_type = p.dtype; qk.c_type = st_;
    qk.lda = D; qk.ldb = D; qk.ldc = ps;
    qk.mode = BatchMode::pointer_array; qk.batch = n;
    // Made into locals first: a setup that fails half-way releases what it made.
    GemmPlan qk_plan = be.gemm().make_plan(qk);
    GemmPlan pv_plan = be.gemm().make_plan(PageCombineBuffers::pv_shape(p, BatchMode::pointer_array));
    qk_plan_ = std::move(qk_plan);
    pv_plan_ = std::move(pv_plan);
  }
  void run(Backend& be) override {
    const Problem& p = p_;
    std::int64_t S = p.seq_len, ps = p.page_size;
    {
      ScopedRange r(be.profiler(), "QK^T (pointer array)");
      be.gemm().run(qk_plan_, q_ptrs_, k_ptrs_, s_ptrs_, p.scale(), 0.0f);
    }
    {
      ScopedRange r(be.profiler(), "page softmax");
      be.kernels().page_softmax(pc_.softmax_args(p, scores_, st_, p.pages * S * ps, S * ps, ps));
    }
    {
      ScopedRange r(be.profiler(), "PV (pointer array)");
      be.gemm().run(pv_plan_, p_ptrs_, v_ptrs_, o_ptrs_, 1.0f, 0.0f);
    }
    ScopedRange r(be.profiler(), "combine pages");
    be.kernels().combine_pages(pc_.combine_args(p, io_.o));
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
  PageCombineBuffers pc_;
  void* scores_ = nullptr;
  void *q_ptrs_ = nullptr, *k_ptrs_ = nullptr, *s_ptrs_ = nullptr, *p_ptrs_ = nullptr, *v_ptrs_ = nullptr,
       *o_ptrs_ = nullptr;
  GemmPlan qk_plan_, pv_plan_;
};

}  // namespace

std::unique_ptr<Strategy> make_ptr_array() { return std::make_unique<PtrArray>(); }

}  // namespace ab

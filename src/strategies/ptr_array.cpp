// `ptr_array`: cuBLASLt pointer-array batching over every (item, page) a sequence uses, one call for Q·K^T
// and one for P·V, reading KV pages wherever they sit in the pool (seed 000's strategy B), then a page-local
// softmax and a combine. An item is a query head (its K/V pointers are its KV head's: broadcast without a
// copy), or with GQA packing the group of query heads sharing a KV head. A ragged batch runs only the pages
// each sequence has. Every page is treated as full size; keys past a sequence's end are masked (contiguous
// K/V carry zeroed slack rows so the over-read stays in bounds).
#include "strategies/page_combine.hpp"
#include "strategies/strategies.hpp"

namespace ab {

namespace {

class PtrArray : public Strategy {
 public:
  std::string name() const override { return "ptr_array"; }
  std::string description() const override { return "pointer-array batched GEMMs over every (head, page) in the pool"; }
  LaunchContract contract(const Problem&, const StrategyOptions&) const override { return {2, 2, "2 gemm + softmax + combine"}; }
  // The window and soft-cap ride in the key mask its softmax primitives (or fused kernel) apply.
  std::vector<std::string> runs_variants() const override { return softmax_variants(); }
  std::string can_implement(const Problem&, const Backend&, const StrategyOptions&) const override { return ""; }
  std::int64_t workspace_bytes(const Problem& p, const StrategyOptions& opt) const override {
    QueryRows qr = query_rows(p, opt);
    std::int64_t n = size_mul(qr.items, p.pages);
    return size_add(size_mul(n, qr.rows, p.page_size, dtype_size(score_type(p, opt))),
                    PageCombineBuffers::bytes(p, qr), size_mul(6, page_products(p, qr), 8));
  }
  void setup(Backend& be, const Problem& p, const AttentionIO& io, const StrategyOptions& opt) override {
    p_ = p;
    io_ = io;
    st_ = score_type(p, opt);
    qr_ = query_rows(p, opt);
    const std::int64_t R = qr_.rows, D = p.head_dim, ps = p.page_size, slots = qr_.items * p.pages;
    scores_ = ws_.add(be, slots * R * ps * static_cast<std::int64_t>(dtype_size(st_)));
    pc_.allocate(be, ws_, p, qr_, key_mask(p, io, qr_));
    const std::int64_t n = page_products(p, qr_);
    std::vector<const void*> qa, ka, sc, pa, va, oa;
    for (auto* v : {&qa, &ka, &sc, &pa, &va, &oa}) v->reserve(static_cast<std::size_t>(n));
    for (std::int64_t item = 0; item < qr_.items; ++item) {
      const std::int64_t b = item / qr_.items_per_seq, kvh = qr_.kv_item(item) % p.kv_heads;
      for (std::int64_t pg = 0; pg < p.pages_of(b); ++pg) {
        const std::int64_t i = item * p.pages + pg;  // the (item, page) slot in the page-major buffers
        qa.push_back(offset_ptr(io.q, item * R * D, p.dtype));
        ka.push_back(k_page_ptr(p, io, b, kvh, pg));
        va.push_back(v_page_ptr(p, io, b, kvh, pg));
        sc.push_back(offset_ptr(scores_, i * R * ps, st_));
        pa.push_back(offset_ptr(pc_.probs, i * R * ps, p.dtype));
        oa.push_back(pc_.partial + i * R * p.head_dim_v);
      }
    }
    auto upload = [&](const std::vector<const void*>& v) {
      void* d = ws_.add(be, static_cast<std::int64_t>(v.size() * sizeof(void*)));
      be.memory().upload(d, v.data(), v.size() * sizeof(void*));
      return d;
    };
    q_ptrs_ = upload(qa); k_ptrs_ = upload(ka); s_ptrs_ = upload(sc);
    p_ptrs_ = upload(pa); v_ptrs_ = upload(va); o_ptrs_ = upload(oa);
    GemmShape qk;
    qk.m = R; qk.n = ps; qk.k = D; qk.b_trans = true;
    qk.a_type = qk.b_type = p.dtype; qk.c_type = st_;
    qk.lda = D; qk.ldb = D; qk.ldc = ps;
    qk.mode = BatchMode::pointer_array; qk.batch = n;
    GemmShape pv = pc_.pv_shape(p, BatchMode::pointer_array);
    pv.batch = n;
    // Made into locals first: a setup that fails half-way releases what it made.
    GemmPlan qk_plan = be.gemm().make_plan(qk);
    GemmPlan pv_plan = be.gemm().make_plan(pv);
    qk_plan_ = std::move(qk_plan);
    pv_plan_ = std::move(pv_plan);
  }
  void run(Backend& be) override {
    const Problem& p = p_;
    const std::int64_t R = qr_.rows, ps = p.page_size;
    {
      ScopedRange r(be.profiler(), "QK^T (pointer array)");
      be.gemm().run(qk_plan_, q_ptrs_, k_ptrs_, s_ptrs_, p.scale(), 0.0f);
    }
    {
      // Slots of pages a sequence does not have are never written: the mask gives them no keys.
      ScopedRange r(be.profiler(), "page softmax");
      be.kernels().page_softmax(pc_.softmax_args(p, scores_, st_, p.pages * R * ps, R * ps, ps));
    }
    {
      ScopedRange r(be.profiler(), "PV (pointer array)");
      be.gemm().run(pv_plan_, p_ptrs_, v_ptrs_, o_ptrs_, 1.0f, 0.0f);
    }
    ScopedRange r(be.profiler(), "combine pages");
    be.kernels().combine_pages(pc_.combine_args(p, io_));
  }
  void teardown(Backend&) override {
    qk_plan_.reset();
    pv_plan_.reset();
    ws_.clear();
  }
  StrategyConfig config() const override { return gemm_strategy_config(st_, false, qr_); }

 private:
  Problem p_;
  AttentionIO io_;
  DType st_ = DType::fp32;
  QueryRows qr_;
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

// Each CUDA kernel primitive (page_softmax, softmax_update, combine_pages, finalize, gather_pages) against
// the CPU backend on random inputs, GPU outputs poisoned (0xFF) beforehand: vector and scalar paths,
// sub-warp, multi-warp and long rows, causal masking, -inf rows, every score/probability/output dtype.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "core/random_inputs.hpp"
#include "core/reference.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::unique_ptr<Backend>& gpu() {
  static std::unique_ptr<Backend> b = make_cuda_backend(0);
  return b;
}
Backend& cpu() {
  static std::unique_ptr<Backend> b = make_cpu_backend();
  return *b;
}

using Bytes = std::vector<unsigned char>;

Bytes random_array(std::int64_t n, DType t, std::mt19937_64& rng, double lo, double hi) {
  Bytes b(static_cast<std::size_t>(n) * dtype_size(t));
  std::uniform_real_distribution<double> d(lo, hi);
  for (std::int64_t i = 0; i < n; ++i) store_element(b.data(), i, t, d(rng));
  return b;
}

// A device copy of a host array (or a poisoned one of the same size).
struct Dev {
  Buffer buf;
  Dev(const Bytes& host, bool poison = false) : buf(gpu()->memory(), host.size()) {
    if (poison) gpu()->memory().fill_bytes(buf.get(), 0xFF, host.size());
    else gpu()->memory().upload(buf.get(), host.data(), host.size());
  }
  Bytes get() const {
    Bytes h(buf.bytes());
    gpu()->memory().download(h.data(), buf.get(), h.size());
    return h;
  }
  void* ptr() const { return buf.get(); }
};

double eps_of(DType t) { return t == DType::fp16 ? 1.0 / 1024 : t == DType::bf16 ? 1.0 / 128 : 1e-6; }

// Element-wise comparison: equal bits (NaN padding included), or |got - want| <= rel*|want| + abs.
bool compare(const char* what, const Bytes& got, const Bytes& want, DType t, double rel, double abs_tol) {
  std::int64_t n = static_cast<std::int64_t>(want.size() / dtype_size(t)), bad = 0;
  double worst = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (std::memcmp(got.data() + i * dtype_size(t), want.data() + i * dtype_size(t), dtype_size(t)) == 0) continue;
    double g = load_element(got.data(), i, t), w = load_element(want.data(), i, t);
    double err = std::fabs(g - w);
    bool ok = std::isfinite(g) && std::isfinite(w) && err <= rel * std::fabs(w) + abs_tol;
    if (!ok) {
      if (bad < 5) std::fprintf(stderr, "    %s[%lld]: got %.9g want %.9g\n", what, static_cast<long long>(i), g, w);
      bad++;
    }
    if (std::isfinite(err)) worst = std::max(worst, err);
  }
  if (bad) std::fprintf(stderr, "    %s: %lld of %lld differ (worst finite error %.3g)\n", what, static_cast<long long>(bad),
                        static_cast<long long>(n), worst);
  return bad == 0;
}

// ---- page_softmax --------------------------------------------------------------------------------

struct PageCase {
  std::int64_t bh, pages, rows, page_size, last_len;
  bool causal, ptr_layout, neg_inf_row;
  DType st, pt;
};

void run_page_softmax(const PageCase& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  PageSoftmaxArgs a;
  a.score_type = c.st;
  a.prob_type = c.pt;
  a.bh_count = c.bh;
  a.pages = c.pages;
  a.rows = c.rows;
  a.page_size = c.page_size;
  a.last_page_len = c.last_len;
  a.mask.causal = c.causal;
  if (c.ptr_layout) {  // ptr_array: [bh, page, row, ps]
    a.score_ld = c.page_size;
    a.score_page_stride = c.rows * c.page_size;
    a.score_bh_stride = c.pages * c.rows * c.page_size;
  } else {  // fully_batched: [bh, row, pages*ps]
    a.score_ld = c.pages * c.page_size;
    a.score_page_stride = c.page_size;
    a.score_bh_stride = c.rows * c.pages * c.page_size;
  }
  std::int64_t n_scores = c.bh * c.pages * c.rows * c.page_size, n_stats = c.bh * c.pages * c.rows;
  Bytes scores = random_array(n_scores, c.st, rng, -4, 4);
  if (c.neg_inf_row)  // every key of (bh 0, page 0, row rows-1) is -inf
    for (std::int64_t col = 0; col < c.page_size; ++col)
      store_element(scores.data(), (c.rows - 1) * a.score_ld + col, c.st, -kInf);
  Bytes probs(n_stats * c.page_size * dtype_size(c.pt), 0xFF), pmax(n_stats * 4, 0xFF), psum(n_stats * 4, 0xFF);
  PageSoftmaxArgs h = a;
  h.scores = scores.data();
  h.probs = probs.data();
  h.page_max = reinterpret_cast<float*>(pmax.data());
  h.page_sum = reinterpret_cast<float*>(psum.data());
  cpu().kernels().page_softmax(h);
  Dev ds(scores), dp(probs, true), dm(pmax, true), dsum(psum, true);
  PageSoftmaxArgs g = a;
  g.scores = ds.ptr();
  g.probs = dp.ptr();
  g.page_max = static_cast<float*>(dm.ptr());
  g.page_sum = static_cast<float*>(dsum.ptr());
  gpu()->kernels().page_softmax(g);
  gpu()->memory().synchronize();
  std::printf("  page_softmax bh=%lld pages=%lld rows=%lld ps=%lld last=%lld causal=%d %s %s/%s\n",
              static_cast<long long>(c.bh), static_cast<long long>(c.pages), static_cast<long long>(c.rows),
              static_cast<long long>(c.page_size), static_cast<long long>(c.last_len), c.causal,
              c.ptr_layout ? "ptr-layout" : "fb-layout", dtype_name(c.st), dtype_name(c.pt));
  EXPECT_TRUE(compare("probs", dp.get(), probs, c.pt, eps_of(c.pt), 1e-7));
  EXPECT_TRUE(compare("page_max", dm.get(), pmax, DType::fp32, 0, 0));
  EXPECT_TRUE(compare("page_sum", dsum.get(), psum, DType::fp32, eps_of(c.pt), 1e-6));
}

// ---- softmax_update --------------------------------------------------------------------------------

struct UpdateCase {
  std::int64_t bh, rows, cols, head_dim, col_offset, ld_pad;
  bool first, causal;
  DType st, pt;
};

void run_softmax_update(const UpdateCase& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  SoftmaxUpdateArgs a;
  a.score_type = c.st;
  a.prob_type = c.pt;
  a.score_ld = c.cols + c.ld_pad;
  a.score_bh_stride = c.rows * a.score_ld;
  a.prob_ld = c.cols + c.ld_pad;
  a.prob_bh_stride = c.rows * a.prob_ld;
  a.bh_count = c.bh;
  a.rows = c.rows;
  a.cols = c.cols;
  a.head_dim = c.head_dim;
  a.col_offset = c.col_offset;
  a.first_page = c.first;
  a.mask.causal = c.causal;
  std::int64_t nrows = c.bh * c.rows;
  Bytes scores = random_array(c.bh * a.score_bh_stride, c.st, rng, -4, 4);
  Bytes probs(c.bh * a.prob_bh_stride * dtype_size(c.pt), 0xFF);
  Bytes rmax = random_array(nrows, DType::fp32, rng, -3, 3), rsum = random_array(nrows, DType::fp32, rng, 0.5, 20);
  Bytes acc = random_array(nrows * c.head_dim, DType::fp32, rng, -5, 5);
  if (!c.first) {  // a row with nothing seen yet (max -inf, sum 0)
    store_element(rmax.data(), 0, DType::fp32, -kInf);
    store_element(rsum.data(), 0, DType::fp32, 0.0);
  }
  Dev ds(scores), dp(probs, true), dmax(rmax), dsum(rsum), dacc(acc);
  SoftmaxUpdateArgs h = a;
  h.scores = scores.data();
  h.probs = probs.data();
  h.row_max = reinterpret_cast<float*>(rmax.data());
  h.row_sum = reinterpret_cast<float*>(rsum.data());
  h.acc = reinterpret_cast<float*>(acc.data());
  cpu().kernels().softmax_update(h);
  SoftmaxUpdateArgs g = a;
  g.scores = ds.ptr();
  g.probs = dp.ptr();
  g.row_max = static_cast<float*>(dmax.ptr());
  g.row_sum = static_cast<float*>(dsum.ptr());
  g.acc = static_cast<float*>(dacc.ptr());
  gpu()->kernels().softmax_update(g);
  gpu()->memory().synchronize();
  std::printf("  softmax_update bh=%lld rows=%lld cols=%lld D=%lld off=%lld pad=%lld first=%d causal=%d %s/%s\n",
              static_cast<long long>(c.bh), static_cast<long long>(c.rows), static_cast<long long>(c.cols),
              static_cast<long long>(c.head_dim), static_cast<long long>(c.col_offset), static_cast<long long>(c.ld_pad),
              c.first, c.causal, dtype_name(c.st), dtype_name(c.pt));
  EXPECT_TRUE(compare("probs", dp.get(), probs, c.pt, eps_of(c.pt), 1e-7));
  EXPECT_TRUE(compare("row_max", dmax.get(), rmax, DType::fp32, 0, 0));
  EXPECT_TRUE(compare("row_sum", dsum.get(), rsum, DType::fp32, eps_of(c.pt), 1e-5));
  EXPECT_TRUE(compare("acc", dacc.get(), acc, DType::fp32, 1e-5, 1e-6));
}

}  // namespace

TEST(CudaPrimitives, page_softmax_matches_cpu) {
  std::uint64_t seed = 10;
  for (DType pt : {DType::fp16, DType::bf16})
    for (DType st : {pt, DType::fp32})
      for (bool causal : {false, true})
        for (bool ptr : {false, true}) {
          run_page_softmax({3, 5, 37, 8, 5, causal, ptr, st == DType::fp32, st, pt}, seed++);    // scalar, G=4
          run_page_softmax({2, 3, 70, 64, 50, causal, ptr, false, st, pt}, seed++);               // 16-byte vectors
        }
}

TEST(CudaPrimitives, page_softmax_long_and_wide_rows) {
  std::uint64_t seed = 50;
  for (DType pt : {DType::fp16, DType::bf16}) {
    run_page_softmax({2, 1, 5, 512, 512, false, false, false, pt, pt}, seed++);                // G=16, 4 chunks
    run_page_softmax({1, 2, 3, 2048, 1999, true, false, false, DType::fp32, pt}, seed++);       // G=64 (two warps)
    run_page_softmax({1, 1, 3, 9000, 9000, false, true, false, pt, pt}, seed++);               // G=512, 3 chunks
    run_page_softmax({1, 1, 2, 40000, 40000, false, true, false, DType::fp32, pt}, seed++);    // beyond the register cache
  }
}

TEST(CudaPrimitives, softmax_update_matches_cpu) {
  std::uint64_t seed = 100;
  for (DType pt : {DType::fp16, DType::bf16})
    for (DType st : {pt, DType::fp32})
      for (bool first : {true, false})
        for (bool causal : {false, true}) {
          run_softmax_update({3, 37, 7, 64, first ? 0 : 14, 0, first, causal, st, pt}, seed++);   // scalar, D vec4
          run_softmax_update({2, 40, 64, 30, first ? 0 : 16, 0, first, causal, st, pt}, seed++);  // vectors, D scalar
          run_softmax_update({2, 20, 13, 128, 9, 3, first, causal, st, pt}, seed++);              // padded ld
        }
  run_softmax_update({1, 4, 3000, 64, 1000, 0, false, true, DType::fp32, DType::fp16}, seed++);  // G=128
  run_softmax_update({1, 2, 40000, 64, 0, 0, false, false, DType::bf16, DType::bf16}, seed++);   // long rows
}

TEST(CudaPrimitives, combine_pages_matches_cpu) {
  std::uint64_t seed = 200;
  for (std::int64_t pages : {4, 1})
    for (DType out : {DType::fp16, DType::bf16, DType::fp32})
      for (std::int64_t D : {64, 30, 128}) {
        std::mt19937_64 rng(seed++);
        CombineArgs a;
        a.bh_count = 3;
        a.pages = pages;
        a.rows = 37;
        a.head_dim = D;
        a.out_type = out;
        std::int64_t n = a.bh_count * a.pages * a.rows;
        Bytes part = random_array(n * D, DType::fp32, rng, -1, 1);
        Bytes pmax = random_array(n, DType::fp32, rng, -3, 3), psum = random_array(n, DType::fp32, rng, 0.5, 5);
        for (std::int64_t i = 0; i < n && pages > 1; i += 7) {  // fully masked pages: max -inf, sum 0, garbage partial
          store_element(pmax.data(), i, DType::fp32, -kInf);
          store_element(psum.data(), i, DType::fp32, 0.0);
          for (std::int64_t d = 0; d < D; ++d) store_element(part.data(), i * D + d, DType::fp32, 1e30);
        }
        Bytes o(a.bh_count * a.rows * D * dtype_size(out), 0xFF);
        CombineArgs h = a;
        h.partial = reinterpret_cast<const float*>(part.data());
        h.page_max = reinterpret_cast<const float*>(pmax.data());
        h.page_sum = reinterpret_cast<const float*>(psum.data());
        h.out = o.data();
        cpu().kernels().combine_pages(h);
        Dev dpart(part), dmax(pmax), dsum(psum), dout(o, true);
        CombineArgs g = a;
        g.partial = static_cast<const float*>(dpart.ptr());
        g.page_max = static_cast<const float*>(dmax.ptr());
        g.page_sum = static_cast<const float*>(dsum.ptr());
        g.out = dout.ptr();
        gpu()->kernels().combine_pages(g);
        gpu()->memory().synchronize();
        std::printf("  combine pages=%lld D=%lld out=%s\n", static_cast<long long>(pages), static_cast<long long>(D),
                    dtype_name(out));
        EXPECT_TRUE(compare("out", dout.get(), o, out, out == DType::fp32 ? 1e-5 : eps_of(out), 1e-7));
      }
}

TEST(CudaPrimitives, finalize_matches_cpu) {
  std::uint64_t seed = 300;
  for (DType out : {DType::fp16, DType::bf16, DType::fp32})
    for (std::int64_t D : {64, 30}) {
      std::mt19937_64 rng(seed++);
      FinalizeArgs a;
      a.bh_count = 2;
      a.rows = 37;
      a.head_dim = D;
      a.out_type = out;
      std::int64_t n = a.bh_count * a.rows;
      Bytes acc = random_array(n * D, DType::fp32, rng, -10, 10), rsum = random_array(n, DType::fp32, rng, 0.5, 20);
      Bytes o(n * D * dtype_size(out), 0xFF);
      FinalizeArgs h = a;
      h.acc = reinterpret_cast<const float*>(acc.data());
      h.row_sum = reinterpret_cast<const float*>(rsum.data());
      h.out = o.data();
      cpu().kernels().finalize(h);
      Dev dacc(acc), dsum(rsum), dout(o, true);
      FinalizeArgs g = a;
      g.acc = static_cast<const float*>(dacc.ptr());
      g.row_sum = static_cast<const float*>(dsum.ptr());
      g.out = dout.ptr();
      gpu()->kernels().finalize(g);
      gpu()->memory().synchronize();
      std::printf("  finalize D=%lld out=%s\n", static_cast<long long>(D), dtype_name(out));
      EXPECT_TRUE(compare("out", dout.get(), o, out, out == DType::fp32 ? 1e-6 : eps_of(out), 1e-7));
    }
}

TEST(CudaPrimitives, gather_pages_matches_cpu) {
  std::uint64_t seed = 400;
  // V as wide as K, and V of its own width (head_dim_v): 16-byte units of two counts (64 / 24), 2-byte ones (30 / 40),
  // and one width a multiple of 16 bytes, the other not (64 / 30, 30 / 64: the 2-byte path).
  for (KvLayout layout : {KvLayout::contiguous, KvLayout::paged})
    for (std::int64_t D : {64, 30})
      for (std::int64_t Dv : {D, D == 64 ? std::int64_t(24) : std::int64_t(40), D == 64 ? std::int64_t(30) : std::int64_t(64)})
      for (DType dt : {DType::fp16, DType::bf16}) {
        ProblemSpec spec{2, 3, 0, 37, 0, D, 5, 0, layout, dt, false, {}, "", 0, 0};
        spec.head_dim_v = Dv;
        Problem p = make_problem(spec);
        HostTensors t = make_random_inputs(p, seed++);
        GatherArgs a;
        a.paged = layout == KvLayout::paged;
        a.batch = p.batch;
        a.kv_heads = p.kv_heads;
        a.seq_len = p.seq_len;
        a.pages = p.pages;
        a.page_size = p.page_size;
        a.head_dim = D;
        a.head_dim_v = Dv;
        a.dtype = dt;
        Bytes kh(static_cast<std::size_t>(p.bh() * p.padded_seq() * D * 2), 0xFF);
        Bytes vh(static_cast<std::size_t>(p.bh() * p.padded_seq() * Dv * 2), 0xFF);
        Bytes ksrc(t.k.size() * 2), vsrc(t.v.size() * 2), bt(t.block_table.size() * 4);
        std::memcpy(ksrc.data(), t.k.data(), ksrc.size());
        std::memcpy(vsrc.data(), t.v.data(), vsrc.size());
        std::memcpy(bt.data(), t.block_table.data(), bt.size());
        GatherArgs h = a;
        h.k_src = ksrc.data();
        h.v_src = vsrc.data();
        h.block_table = a.paged ? reinterpret_cast<const std::int32_t*>(bt.data()) : nullptr;
        h.k_dst = kh.data();
        h.v_dst = vh.data();
        cpu().kernels().gather_pages(h);
        Dev dk(ksrc), dv(vsrc), dkd(kh, true), dvd(vh, true);
        std::unique_ptr<Dev> dbt;
        if (a.paged) dbt = std::make_unique<Dev>(bt);
        GatherArgs g = a;
        g.k_src = dk.ptr();
        g.v_src = dv.ptr();
        g.block_table = dbt ? static_cast<const std::int32_t*>(dbt->ptr()) : nullptr;
        g.k_dst = dkd.ptr();
        g.v_dst = dvd.ptr();
        gpu()->kernels().gather_pages(g);
        gpu()->memory().synchronize();
        std::printf("  gather %s D=%lld Dv=%lld %s\n", kv_layout_name(layout), static_cast<long long>(D),
                    static_cast<long long>(Dv), dtype_name(dt));
        EXPECT_TRUE(dkd.get() == kh);
        EXPECT_TRUE(dvd.get() == vh);
      }
}

// The verification statistics computed on the GPU equal the host's compare_output on the same data: random
// outputs near a random reference, a size that fills no block evenly, both dtypes, then with NaN and Inf.
TEST(CudaPrimitives, compare_to_reference_matches_the_host) {
  std::mt19937_64 rng(99);
  for (DType t : {DType::fp16, DType::bf16}) {
    Problem p = make_problem(3, 5, 1000, 72, 1, 0, KvLayout::contiguous, t, false);
    const std::int64_t n = p.q_elements();
    std::vector<float> ref(static_cast<std::size_t>(n));
    std::normal_distribution<double> nd(0.0, 1.0);
    for (auto& r : ref) r = static_cast<float>(nd(rng));
    Bytes out(static_cast<std::size_t>(n) * dtype_size(t));
    for (std::int64_t i = 0; i < n; ++i) store_element(out.data(), i, t, ref[i] * (1.0 + 0.003 * nd(rng)));
    Buffer dref(gpu()->memory(), ref.size() * sizeof(float));
    gpu()->memory().upload(dref.get(), ref.data(), ref.size() * sizeof(float));
    for (int poison : {0, 1}) {
      if (poison) {
        store_element(out.data(), 17, t, std::numeric_limits<double>::quiet_NaN());
        store_element(out.data(), n - 1, t, kInf);
      }
      Dev dout(out);
      ErrorStats host = compare_output(p, out.data(), ref.data());
      ErrorStats dev = gpu()->verifier().compare_to_reference(p, dout.ptr(), dref.as<float>());
      EXPECT_EQ(dev.count, host.count);
      EXPECT_EQ(dev.nonfinite, host.nonfinite);
      EXPECT_EQ(dev.nonfinite, std::int64_t(poison ? 2 : 0));
      EXPECT_NEAR(dev.max_abs, host.max_abs, 1e-12);
      if (poison) EXPECT_TRUE(std::isinf(dev.rel_l2));
      else {
        EXPECT_NEAR(dev.rel_l2, host.rel_l2, 1e-9);
        EXPECT_TRUE(host.rel_l2 > 1e-3);  // the perturbation is really there
      }
    }
  }
}

TEST(CudaPrimitives, unsupported_dtypes_are_refused) {
  SoftmaxUpdateArgs a;
  a.score_type = DType::fp16;
  a.prob_type = DType::bf16;
  EXPECT_ANY_THROW(gpu()->kernels().softmax_update(a));
  PageSoftmaxArgs p;
  p.prob_type = DType::fp32;
  EXPECT_ANY_THROW(gpu()->kernels().page_softmax(p));
}

int main(int argc, char** argv) {
  if (ab::cuda_device_count() == 0) attnbench_testing::skip_test_program("no CUDA device");
  int rc = attnbench_testing::run_all_tests(argc, argv);
  gpu().reset();
  return rc;
}

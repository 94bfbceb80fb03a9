// cuBLASLt GEMMs against the CPU backend in every mode (single, strided, pointer-array), NT and NN,
// fp16/bf16 inputs, fp32 and 16-bit outputs, beta 0 and 1, aligned and odd sizes; then the tuning hooks:
// heuristic and exhaustive candidates, set_algo, the chooser ("cache") and its fallback, the report.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "core/errors.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

std::unique_ptr<Backend>& gpu() {
  static std::unique_ptr<Backend> b = make_cuda_backend(0);
  return b;
}
Backend& cpu() {
  static std::unique_ptr<Backend> b = make_cpu_backend();
  return *b;
}

using Bytes = std::vector<unsigned char>;

Bytes random_array(std::int64_t n, DType t, std::mt19937_64& rng) {
  Bytes b(static_cast<std::size_t>(n) * dtype_size(t));
  std::uniform_real_distribution<double> d(-1, 1);
  for (std::int64_t i = 0; i < n; ++i) store_element(b.data(), i, t, d(rng));
  return b;
}

GemmShape make_shape(std::int64_t m, std::int64_t n, std::int64_t k, bool nt, DType in, DType out, BatchMode mode,
                     std::int64_t batch) {
  GemmShape g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.b_trans = nt;
  g.a_type = g.b_type = in;
  g.c_type = out;
  g.lda = k;
  g.ldb = nt ? k : n;
  g.ldc = n;
  g.mode = mode;
  g.batch = mode == BatchMode::single ? 1 : batch;
  if (mode == BatchMode::strided) {  // padded strides: matrices do not touch
    g.stride_a = m * k + 8;
    g.stride_b = n * k + 16;
    g.stride_c = m * n + 8;
  }
  return g;
}

// Operands of one GEMM test, on host and device (pointer-array mode: separate matrices, arrays of pointers).
struct Operands {
  GemmShape g;
  std::int64_t a_elems, b_elems, c_elems;  // per matrix slot (stride or size)
  Bytes a, b, c;
  Buffer da, db, dc, pa, pb, pc;
  std::vector<const void*> ha_ptrs, hb_ptrs;
  std::vector<void*> hc_ptrs;

  Operands(const GemmShape& s, std::uint64_t seed) : g(s) {
    std::mt19937_64 rng(seed);
    a_elems = g.mode == BatchMode::strided ? g.stride_a : g.m * g.lda;
    b_elems = g.mode == BatchMode::strided ? g.stride_b : (g.b_trans ? g.n : g.k) * g.ldb;
    c_elems = g.mode == BatchMode::strided ? g.stride_c : g.m * g.ldc;
    a = random_array(a_elems * g.batch, g.a_type, rng);
    b = random_array(b_elems * g.batch, g.b_type, rng);
    c = random_array(c_elems * g.batch, g.c_type, rng);
    Backend& be = *gpu();
    da = Buffer(be.memory(), a.size());
    db = Buffer(be.memory(), b.size());
    dc = Buffer(be.memory(), c.size());
    be.memory().upload(da.get(), a.data(), a.size());
    be.memory().upload(db.get(), b.data(), b.size());
    if (g.mode == BatchMode::pointer_array) {  // matrices in reverse order, so the pointers matter
      std::vector<const void*> va, vb;
      std::vector<void*> vc;
      for (std::int64_t i = 0; i < g.batch; ++i) {
        std::int64_t j = g.batch - 1 - i;
        va.push_back(offset_ptr(da.get(), j * a_elems, g.a_type));
        vb.push_back(offset_ptr(db.get(), j * b_elems, g.b_type));
        vc.push_back(offset_ptr(dc.get(), j * c_elems, g.c_type));
        ha_ptrs.push_back(offset_ptr(static_cast<const void*>(a.data()), j * a_elems, g.a_type));
        hb_ptrs.push_back(offset_ptr(static_cast<const void*>(b.data()), j * b_elems, g.b_type));
        hc_ptrs.push_back(nullptr);  // filled per call (host C changes)
      }
      pa = Buffer(be.memory(), va.size() * sizeof(void*));
      pb = Buffer(be.memory(), vb.size() * sizeof(void*));
      pc = Buffer(be.memory(), vc.size() * sizeof(void*));
      be.memory().upload(pa.get(), va.data(), va.size() * sizeof(void*));
      be.memory().upload(pb.get(), vb.data(), vb.size() * sizeof(void*));
      be.memory().upload(pc.get(), vc.data(), vc.size() * sizeof(void*));
    }
  }
  // Runs C = alpha A op(B) + beta C on both backends from the same initial C; true when they agree.
  bool run_and_compare(const GemmPlan& gpu_plan, float alpha, float beta, const char* what) {
    Backend& be = *gpu();
    be.memory().upload(dc.get(), c.data(), c.size());
    Bytes want = c;
    GemmPlan cp = cpu().gemm().make_plan(g);
    if (g.mode == BatchMode::pointer_array) {
      for (std::int64_t i = 0; i < g.batch; ++i) hc_ptrs[i] = offset_ptr(static_cast<void*>(want.data()), (g.batch - 1 - i) * c_elems, g.c_type);
      cpu().gemm().run(cp, ha_ptrs.data(), hb_ptrs.data(), hc_ptrs.data(), alpha, beta);
      be.gemm().run(gpu_plan, pa.get(), pb.get(), pc.get(), alpha, beta);
    } else {
      cpu().gemm().run(cp, a.data(), b.data(), want.data(), alpha, beta);
      be.gemm().run(gpu_plan, da.get(), db.get(), dc.get(), alpha, beta);
    }
    cp.reset();
    be.memory().synchronize();
    Bytes got(c.size());
    be.memory().download(got.data(), dc.get(), got.size());
    const double eps = g.c_type == DType::fp32 ? 2e-6 : g.c_type == DType::fp16 ? 1.0 / 1024 : 1.0 / 128;
    const double abs_tol = 1e-5 * std::sqrt(static_cast<double>(g.k));
    std::int64_t n = static_cast<std::int64_t>(c.size() / dtype_size(g.c_type)), bad = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double x = load_element(got.data(), i, g.c_type), w = load_element(want.data(), i, g.c_type);
      // 16-bit outputs: the library may round alpha·AB before adding beta·C, so when the two cancel the
      // error scales with the terms, not with the (small) result.
      double c0 = std::fabs(beta * load_element(c.data(), i, g.c_type));
      if (!(std::fabs(x - w) <= 2 * eps * (std::fabs(w) + c0) + abs_tol)) {
        if (bad < 3) std::fprintf(stderr, "    %s [%lld]: got %.7g want %.7g\n", what, static_cast<long long>(i), x, w);
        bad++;
      }
    }
    if (bad) std::fprintf(stderr, "    %s: %lld of %lld differ\n", what, static_cast<long long>(bad), static_cast<long long>(n));
    return bad == 0;
  }
};

}  // namespace

TEST(CudaGemm, every_gemm_mode_matches_cpu) {
  std::uint64_t seed = 1;
  struct Size { std::int64_t m, n, k; } sizes[] = {{64, 48, 64}, {37, 19, 21}};
  for (BatchMode mode : {BatchMode::single, BatchMode::strided, BatchMode::pointer_array})
    for (bool nt : {true, false})
      for (DType in : {DType::fp16, DType::bf16})
        for (DType out : {DType::fp32, in})
          for (const Size& s : sizes) {
            GemmShape g = make_shape(s.m, s.n, s.k, nt, in, out, mode, 3);
            Operands ops(g, seed++);
            GemmPlan plan = gpu()->gemm().make_plan(g);
            std::string what = g.key();
            std::printf("  %s  [%s]\n", what.c_str(), gpu()->gemm().plan_report().back().algo.c_str());
            EXPECT_TRUE(ops.run_and_compare(plan, 0.125f, 0.0f, what.c_str()));
            EXPECT_TRUE(ops.run_and_compare(plan, 1.0f, 1.0f, (what + " beta=1").c_str()));
            plan.reset();
          }
}

TEST(CudaGemm, invalid_shape_is_a_backend_error) {
  GemmShape g = make_shape(16, 16, 16, true, DType::fp16, DType::fp32, BatchMode::single, 1);
  g.ldc = 8;  // < n
  bool thrown = false;
  try {
    gpu()->gemm().make_plan(g);
  } catch (const BackendError& e) {
    thrown = std::string(e.what()).find(g.key()) != std::string::npos;
  }
  EXPECT_TRUE(thrown);
  EXPECT_ANY_THROW(gpu()->gemm().run(12345, nullptr, nullptr, nullptr, 1, 0));
}

TEST(CudaGemm, heuristic_candidates_and_set_gemm_algo) {
  GemmShape g = make_shape(512, 512, 64, true, DType::fp16, DType::fp16, BatchMode::strided, 4);
  Operands ops(g, 77);
  GemmPlan plan = gpu()->gemm().make_plan(g);
  auto report = gpu()->gemm().plan_report();
  ASSERT_TRUE(report.size() == 1);
  EXPECT_EQ(report[0].source, std::string("heuristic"));
  EXPECT_EQ(report[0].shape, g.key());
  auto cands = gpu()->gemm().candidates(plan.id(), 8, false);
  ASSERT_TRUE(!cands.empty());
  EXPECT_TRUE(cands.size() <= 8);
  EXPECT_TRUE(cands[0].heuristic_first);
  for (std::size_t i = 0; i < cands.size(); ++i) {
    EXPECT_EQ(cands[i].blob.size(), std::size_t(64));
    EXPECT_TRUE(cands[i].attrs.contains("ALGO_ID") && cands[i].attrs.contains("TILE_ID") && cands[i].attrs.contains("STAGES_ID") &&
          cands[i].attrs.contains("SPLITK_NUM") && cands[i].attrs.contains("CLUSTER_SHAPE_ID"));
    std::printf("  candidate %zu: %s\n", i, cands[i].label.c_str());
    gpu()->gemm().set_algo(plan.id(), cands[i], "tuned");
    EXPECT_TRUE(ops.run_and_compare(plan, 0.125f, 0.0f, cands[i].label.c_str()));
  }
  EXPECT_EQ(gpu()->gemm().plan_report()[0].source, std::string("tuned"));
  // Rebuilt from attributes alone (no blob), through JSON.
  GemmAlgo attrs_only = GemmAlgo::from_json(cands.back().to_json());
  attrs_only.blob.clear();
  gpu()->gemm().set_algo(plan.id(), attrs_only, "cache");
  EXPECT_TRUE(ops.run_and_compare(plan, 1.0f, 1.0f, "rebuilt from attrs"));
  // An algorithm that cannot exist.
  GemmAlgo bogus;
  bogus.attrs = {{"ALGO_ID", 99999}};
  bogus.label = "bogus";
  EXPECT_ANY_THROW(gpu()->gemm().set_algo(plan.id(), bogus, "tuned"));
  plan.reset();
}

TEST(CudaGemm, exhaustive_candidates_run_correctly) {
  for (BatchMode mode : {BatchMode::strided, BatchMode::pointer_array}) {
    GemmShape g = make_shape(256, 64, 256, false, DType::bf16, DType::fp32, mode, 6);
    Operands ops(g, 99);
    GemmPlan plan = gpu()->gemm().make_plan(g);
    auto heur = gpu()->gemm().candidates(plan.id(), 4, false);
    auto all = gpu()->gemm().candidates(plan.id(), 4, true);
    std::printf("  %s: %zu heuristic, %zu exhaustive candidates\n", batch_mode_name(mode), heur.size(), all.size());
    ASSERT_TRUE(!all.empty());
    EXPECT_TRUE(all[0].heuristic_first);
    EXPECT_TRUE(all.size() >= heur.size());
    EXPECT_TRUE(all.size() <= 2001);
    // Try a spread of them: first, last, and every n-th.
    std::size_t step = std::max<std::size_t>(1, all.size() / 12);
    int tried = 0, failed_to_set = 0;
    for (std::size_t i = 0; i < all.size(); i += step) {
      try {
        gpu()->gemm().set_algo(plan.id(), all[i], "tuned");
      } catch (const BackendError& e) {
        std::fprintf(stderr, "    set_algo(%s): %s\n", all[i].label.c_str(), e.what());
        failed_to_set++;
        continue;
      }
      tried++;
      EXPECT_TRUE(ops.run_and_compare(plan, 1.0f, 0.0f, all[i].label.c_str()));
    }
    EXPECT_EQ(failed_to_set, 0);
    EXPECT_TRUE(tried > 0);
    plan.reset();
  }
}

TEST(CudaGemm, chooser_supplies_cached_algorithms) {
  GemmShape g = make_shape(128, 128, 64, true, DType::fp16, DType::fp32, BatchMode::strided, 2);
  Operands ops(g, 5);
  GemmPlan p0 = gpu()->gemm().make_plan(g);
  auto cands = gpu()->gemm().candidates(p0.id(), 4, false);
  p0.reset();
  GemmAlgo want = cands.back();
  int asked = 0;
  gpu()->gemm().set_chooser([&](const GemmShape& s, GemmAlgo* out) {
    asked++;
    if (s.key() != g.key()) return false;
    *out = want;
    return true;
  });
  GemmPlan p1 = gpu()->gemm().make_plan(g);
  auto rep = gpu()->gemm().plan_report();
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(rep[0].source, std::string("cache"));
  EXPECT_EQ(rep[0].algo, want.label);
  EXPECT_TRUE(ops.run_and_compare(p1, 1.0f, 0.0f, "cached algo"));
  p1.reset();
  // A cached algorithm that fails its check falls back to the heuristic, with a note.
  GemmAlgo broken;
  broken.attrs = {{"ALGO_ID", -7}};
  broken.label = "broken";
  gpu()->gemm().set_chooser([&](const GemmShape&, GemmAlgo* out) {
    *out = broken;
    return true;
  });
  GemmPlan p2 = gpu()->gemm().make_plan(g);
  rep = gpu()->gemm().plan_report();
  EXPECT_EQ(rep[0].source, std::string("heuristic"));
  EXPECT_FALSE(rep[0].note.empty());
  EXPECT_TRUE(ops.run_and_compare(p2, 1.0f, 0.0f, "fallback"));
  gpu()->gemm().set_chooser(nullptr);
  p2.reset();
}

int main(int argc, char** argv) {
  if (ab::cuda_device_count() == 0) attnbench_testing::skip_test_program("no CUDA device");
  int rc = attnbench_testing::run_all_tests(argc, argv);
  gpu().reset();
  return rc;
}

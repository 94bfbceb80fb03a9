// A sticky device error (a GEMM reading an unmapped address) becomes a BackendError marked sticky, and
// recover() either rebuilds the context so that allocation, GEMMs and CUPTI counting work again, or (where
// the driver refuses a new context in this process) returns false with its reason, and later calls throw.
#include <cstdio>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_backend_impl.hpp"
#include "core/errors.hpp"
#include "testing.hpp"

using namespace ab;

namespace {
std::unique_ptr<Backend>& gpu() {
  static std::unique_ptr<Backend> b = make_cuda_backend(0);
  return b;
}
GemmShape shape() {
  GemmShape g;
  g.m = 256; g.n = 256; g.k = 64; g.b_trans = true;
  g.a_type = g.b_type = DType::fp16; g.c_type = DType::fp32;
  g.lda = 64; g.ldb = 64; g.ldc = 256;
  return g;
}
}  // namespace

TEST(CudaRecover, sticky_error_then_recover) {
  Backend& be = *gpu();
  Buffer b(be.memory(), 256 * 64 * 2), c(be.memory(), 256 * 256 * 4);
  be.memory().fill_bytes(b.get(), 0, b.bytes());
  GemmPlan plan = be.gemm().make_plan(shape());
  bool sticky = false;
  try {
    be.gemm().run(plan, reinterpret_cast<const void*>(std::uintptr_t(0x100000)), b.get(), c.get(), 1.0f, 0.0f);
    be.memory().synchronize();
  } catch (const BackendError& e) {
    sticky = e.sticky;
    std::printf("  error: %s (sticky %d)\n", e.what(), e.sticky);
  }
  EXPECT_TRUE(sticky);
  bool ok = be.recover();
  if (!ok) {
    // CUDA documents an illegal address as fatal to the process; where the driver refuses a new context
    // (exclusive-process mode), recover() must say so and later calls must fail cleanly, not crash.
    std::string why = dynamic_cast<cuda::CudaBackend&>(be).last_recover_error();
    std::printf("  recover() returned false: %s\n", why.c_str());
    EXPECT_TRUE(!why.empty());
    b.forget();
    c.forget();
    EXPECT_ANY_THROW(be.memory().alloc(1024));
    return;
  }
  b.forget();
  c.forget();
  Buffer b2(be.memory(), 256 * 64 * 2), a2(be.memory(), 256 * 64 * 2), c2(be.memory(), 256 * 256 * 4);
  std::vector<std::uint16_t> ones(256 * 64, float_to_half_bits(1.0f));
  be.memory().upload(a2.get(), ones.data(), ones.size() * 2);
  be.memory().upload(b2.get(), ones.data(), ones.size() * 2);
  GemmPlan p2 = be.gemm().make_plan(shape());
  be.profiler().begin_launch_count();
  be.gemm().run(p2, a2.get(), b2.get(), c2.get(), 1.0f, 0.0f);
  LaunchRecord r = be.profiler().end_launch_count();  // CUPTI still counts in the new context
  EXPECT_EQ(r.gemm_calls, std::int64_t(1));
  EXPECT_EQ(r.source, std::string("cupti"));
  EXPECT_TRUE(r.kernels >= 1);
  std::vector<float> out(256 * 256);
  be.memory().download(out.data(), c2.get(), out.size() * 4);
  EXPECT_EQ(out[0], 64.0f);
  EXPECT_EQ(out.back(), 64.0f);
  p2.reset();
}

int main(int argc, char** argv) {
  if (ab::cuda_device_count() == 0) attnbench_testing::skip_test_program("no CUDA device");
  int rc = attnbench_testing::run_all_tests(argc, argv);
  gpu().reset();
  return rc;
}

// The CUDA backend's runtime hooks: device info, CUPTI launch counting (one known kernel counted exactly,
// GEMM calls and kernel names), CUDA-graph capture and replay, capture failure, event timer, L2 flush,
// clocks, NVTX ranges and out-of-memory errors.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "backends/cuda/cuda_backend.hpp"
#include "core/errors.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

std::unique_ptr<Backend>& gpu() {
  static std::unique_ptr<Backend> b = make_cuda_backend(0);
  return b;
}

// A finalize over `rows` x `d`: out = acc / row_sum, with acc = i and row_sum = 2.
struct FinalizeJob {
  std::int64_t rows = 256, d = 64;
  Buffer acc, sum, out;
  FinalizeArgs args;
  FinalizeJob() {
    Backend& be = *gpu();
    std::vector<float> a(rows * d), s(rows, 2.0f);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 1000);
    acc = Buffer(be.memory(), a.size() * 4);
    sum = Buffer(be.memory(), s.size() * 4);
    out = Buffer(be.memory(), a.size() * 4);
    be.memory().upload(acc.get(), a.data(), a.size() * 4);
    be.memory().upload(sum.get(), s.data(), s.size() * 4);
    args.acc = acc.as<float>();
    args.row_sum = sum.as<float>();
    args.bh_count = 1;
    args.rows = rows;
    args.head_dim = d;
    args.out = out.get();
    args.out_type = DType::fp32;
  }
  bool output_ok() {
    std::vector<float> o(rows * d);
    gpu()->memory().download(o.data(), out.get(), o.size() * 4);
    for (std::size_t i = 0; i < o.size(); ++i)
      if (o[i] != static_cast<float>(i % 1000) / 2.0f) return false;
    return true;
  }
};

GemmShape small_gemm() {
  GemmShape g;
  g.m = 128; g.n = 128; g.k = 64; g.b_trans = true;
  g.a_type = g.b_type = DType::fp16; g.c_type = DType::fp32;
  g.lda = 64; g.ldb = 64; g.ldc = 128;
  return g;
}

}  // namespace

TEST(CudaRuntime, device_info_is_filled) {
  DeviceInfo d = gpu()->device_info();
  std::printf("  %s\n", d.to_json().dump().c_str());
  EXPECT_EQ(d.backend, std::string("cuda"));
  EXPECT_TRUE(!d.name.empty());
  EXPECT_TRUE(d.cc_major >= 7);
  EXPECT_TRUE(d.sm_count > 0);
  EXPECT_TRUE(d.l2_bytes > 0);
  EXPECT_TRUE(d.memory_bytes > 0 && d.memory_free > 0 && d.memory_free <= d.memory_bytes);
  EXPECT_TRUE(!d.driver.empty() && !d.cuda_runtime.empty() && !d.cublaslt.empty());
  EXPECT_TRUE(d.clock_mhz_max > 0);
  EXPECT_EQ(gpu()->verifier().reference_name(), std::string("cuda-fp32"));
  int clk = gpu()->profiler().current_sm_clock_mhz();
  std::printf("  current SM clock %d MHz (0: NVML unavailable)\n", clk);
  EXPECT_TRUE(clk >= 0);
}

TEST(CudaRuntime, cupti_counts_one_kernel_exactly) {
  FinalizeJob job;
  gpu()->memory().synchronize();
  gpu()->profiler().begin_launch_count();
  gpu()->kernels().finalize(job.args);
  LaunchRecord r = gpu()->profiler().end_launch_count();
  std::printf("  source %s, kernels %lld, names:", r.source.c_str(), static_cast<long long>(r.kernels));
  for (const auto& n : r.kernel_names) std::printf(" [%s]", n.c_str());
  std::printf(", %.4f ms\n", r.kernel_time_ms);
  EXPECT_EQ(r.source, std::string("cupti"));
  EXPECT_EQ(r.kernels, std::int64_t(1));
  EXPECT_EQ(r.other_kernels, std::int64_t(1));
  EXPECT_EQ(r.gemm_calls, std::int64_t(0));
  ASSERT_TRUE(r.kernel_names.size() == 1);
  EXPECT_TRUE(r.kernel_names[0].find("finalize_kernel") != std::string::npos);
  EXPECT_TRUE(r.kernel_names[0].size() > 3 && r.kernel_names[0].substr(r.kernel_names[0].size() - 3) == " x1");
  EXPECT_TRUE(r.kernel_time_ms > 0);
  EXPECT_TRUE(job.output_ok());
}

TEST(CudaRuntime, cupti_windows_are_independent) {
  FinalizeJob job;
  Buffer a(gpu()->memory(), 128 * 64 * 2), b(gpu()->memory(), 128 * 64 * 2), c(gpu()->memory(), 128 * 128 * 4);
  gpu()->memory().fill_bytes(a.get(), 0, a.bytes());
  gpu()->memory().fill_bytes(b.get(), 0, b.bytes());
  GemmPlan plan = gpu()->gemm().make_plan(small_gemm());
  gpu()->kernels().finalize(job.args);  // outside any window: not counted
  gpu()->profiler().begin_launch_count();
  for (int i = 0; i < 3; ++i) gpu()->kernels().finalize(job.args);
  gpu()->gemm().run(plan, a.get(), b.get(), c.get(), 1.0f, 0.0f);
  gpu()->profiler().flush_l2();  // a memset: no kernel
  LaunchRecord r = gpu()->profiler().end_launch_count();
  std::printf("  kernels %lld:", static_cast<long long>(r.kernels));
  for (const auto& n : r.kernel_names) std::printf(" [%s]", n.c_str());
  std::printf("\n");
  EXPECT_EQ(r.gemm_calls, std::int64_t(1));
  EXPECT_EQ(r.other_kernels, std::int64_t(3));
  EXPECT_TRUE(r.kernels >= 4);
  bool found = false;
  for (const auto& n : r.kernel_names)
    if (n.find("finalize_kernel") != std::string::npos) found = n.substr(n.size() - 3) == " x3";
  EXPECT_TRUE(found);
  gpu()->profiler().begin_launch_count();
  LaunchRecord empty = gpu()->profiler().end_launch_count();
  EXPECT_EQ(empty.kernels, std::int64_t(0));
  EXPECT_EQ(empty.gemm_calls, std::int64_t(0));
  plan.reset();
}

TEST(CudaRuntime, graph_capture_replays_the_forward) {
  FinalizeJob job;
  Backend& be = *gpu();
  std::vector<std::uint16_t> ha(128 * 64), hb(128 * 64);
  for (std::size_t i = 0; i < ha.size(); ++i) {
    ha[i] = float_to_half_bits(static_cast<float>(i % 7) * 0.25f);
    hb[i] = float_to_half_bits(static_cast<float>(i % 5) * 0.5f);
  }
  Buffer a(be.memory(), ha.size() * 2), b(be.memory(), hb.size() * 2), c(be.memory(), 128 * 128 * 4);
  be.memory().upload(a.get(), ha.data(), ha.size() * 2);
  be.memory().upload(b.get(), hb.data(), hb.size() * 2);
  GemmPlan plan = be.gemm().make_plan(small_gemm());
  auto forward = [&] {
    be.kernels().finalize(job.args);
    be.gemm().run(plan, a.get(), b.get(), c.get(), 1.0f, 0.0f);
  };
  forward();
  be.memory().synchronize();
  std::vector<float> eager(128 * 128);
  be.memory().download(eager.data(), c.get(), eager.size() * 4);
  auto graph = be.profiler().capture(forward);
  ASSERT_TRUE(graph != nullptr);
  for (int rep = 0; rep < 2; ++rep) {
    be.memory().fill_bytes(c.get(), 0xFF, c.bytes());
    be.memory().fill_bytes(job.out.get(), 0xFF, job.out.bytes());
    be.profiler().begin_launch_count();
    graph->replay();
    LaunchRecord r = be.profiler().end_launch_count();
    std::vector<float> replayed(128 * 128);
    be.memory().download(replayed.data(), c.get(), replayed.size() * 4);
    EXPECT_TRUE(std::memcmp(eager.data(), replayed.data(), eager.size() * 4) == 0);
    EXPECT_TRUE(job.output_ok());
    EXPECT_TRUE(r.kernels >= 2);  // the graph's kernels are seen by CUPTI
    EXPECT_EQ(r.gemm_calls, std::int64_t(0));  // ...but no backend calls were made
  }
  graph.reset();
  plan.reset();
}

TEST(CudaRuntime, capture_failure_returns_null_and_leaves_the_backend_usable) {
  FinalizeJob job;
  Backend& be = *gpu();
  auto graph = be.profiler().capture([&] {
    be.kernels().finalize(job.args);
    be.memory().synchronize();  // not allowed while capturing
  });
  EXPECT_TRUE(graph == nullptr);
  be.memory().fill_bytes(job.out.get(), 0, job.out.bytes());
  be.kernels().finalize(job.args);
  be.memory().synchronize();
  EXPECT_TRUE(job.output_ok());
}

TEST(CudaRuntime, event_timer_measures_device_work) {
  FinalizeJob job;
  auto t = gpu()->profiler().make_timer();
  t->start();
  for (int i = 0; i < 20; ++i) gpu()->kernels().finalize(job.args);
  t->stop();
  double ms = t->elapsed_ms();
  std::printf("  20 finalize launches: %.4f ms\n", ms);
  EXPECT_TRUE(ms > 0 && ms < 1000);
  gpu()->profiler().flush_l2();
  gpu()->profiler().flush_l2();
  gpu()->memory().synchronize();
  gpu()->profiler().range_push("test range");
  gpu()->profiler().range_pop();
}

TEST(CudaRuntime, out_of_memory_is_a_clear_error) {
  bool thrown = false, sticky = true;
  try {
    gpu()->memory().alloc(std::size_t(1) << 50);
  } catch (const BackendError& e) {
    thrown = std::string(e.what()).find("out of memory") != std::string::npos;
    sticky = e.sticky;
    std::printf("  %s\n", e.what());
  }
  EXPECT_TRUE(thrown);
  EXPECT_TRUE(!sticky);
  void* p = gpu()->memory().alloc(1024);  // the device is still fine
  EXPECT_TRUE(p != nullptr);
  gpu()->memory().free(p);
  gpu()->memory().free(p);  // a second free of the same pointer is ignored
}

int main(int argc, char** argv) {
  if (ab::cuda_device_count() == 0) attnbench_testing::skip_test_program("no CUDA device");
  int rc = attnbench_testing::run_all_tests(argc, argv);
  gpu().reset();
  return rc;
}

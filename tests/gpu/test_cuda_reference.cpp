// The CUDA backend's fp32 reference attention against the CPU fp64 reference on small random problems
// (fp16/bf16, causal or not, contiguous or paged, D=64/128, ragged lengths with a sliding window and soft-cap),
// and its speed at the default shape.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include "backends/cuda/cuda_backend.hpp"
#include "core/random_inputs.hpp"
#include "core/reference.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

std::unique_ptr<Backend>& gpu() {
  static std::unique_ptr<Backend> b = make_cuda_backend(0);
  return b;
}

struct DeviceInputs {
  Buffer q, k, v, bt, lens, sinks;
  std::vector<std::int32_t> bt_host, lens_host;
  AttentionIO io() const {
    AttentionIO a;
    a.q = q.get();
    a.k = k.get();
    a.v = v.get();
    a.block_table = bt.as<std::int32_t>();
    a.block_table_host = bt_host.empty() ? nullptr : bt_host.data();
    a.kv_lens = lens_host.empty() ? nullptr : lens.as<std::int32_t>();
    a.kv_lens_host = lens_host.empty() ? nullptr : lens_host.data();
    a.sinks = sinks.as<float>();
    return a;
  }
};

DeviceInputs upload(Backend& be, const Problem& p, const HostTensors& t) {
  DeviceInputs d;
  const bool paged = p.kv_layout == KvLayout::paged;
  std::size_t k = paged ? t.k.size() : t.k.size() + kv_slack_rows(p) * p.head_dim;
  std::size_t v = paged ? t.v.size() : t.v.size() + kv_slack_rows(p) * p.head_dim_v;
  d.q = Buffer(be.memory(), t.q.size() * 2);
  d.k = Buffer(be.memory(), k * 2);
  d.v = Buffer(be.memory(), v * 2);
  be.memory().fill_bytes(d.k.get(), 0, k * 2);
  be.memory().fill_bytes(d.v.get(), 0, v * 2);
  be.memory().upload(d.q.get(), t.q.data(), t.q.size() * 2);
  be.memory().upload(d.k.get(), t.k.data(), t.k.size() * 2);
  be.memory().upload(d.v.get(), t.v.data(), t.v.size() * 2);
  for (std::int64_t len : p.kv_lens) d.lens_host.push_back(static_cast<std::int32_t>(len));
  if (!d.lens_host.empty()) {  // a ragged batch: each sequence's length, as the runner hands it over
    d.lens = Buffer(be.memory(), d.lens_host.size() * 4);
    be.memory().upload(d.lens.get(), d.lens_host.data(), d.lens_host.size() * 4);
  }
  if (!t.sinks.empty()) {
    d.sinks = Buffer(be.memory(), t.sinks.size() * 4);
    be.memory().upload(d.sinks.get(), t.sinks.data(), t.sinks.size() * 4);
  }
  d.bt_host = t.block_table;
  if (!t.block_table.empty()) {
    d.bt = Buffer(be.memory(), t.block_table.size() * 4);
    be.memory().upload(d.bt.get(), t.block_table.data(), t.block_table.size() * 4);
  }
  return d;
}

void check_against_fp64(const Problem& p, std::uint64_t seed) {
  Backend& be = *gpu();
  HostTensors t = make_random_inputs(p, seed);
  DeviceInputs d = upload(be, p, t);
  Buffer out(be.memory(), p.o_elements() * 4);
  be.memory().fill_bytes(out.get(), 0xFF, out.bytes());
  be.verifier().reference_attention(p, d.io(), out.as<float>());
  be.memory().synchronize();
  std::vector<float> got(p.o_elements());
  be.memory().download(got.data(), out.get(), got.size() * 4);
  std::vector<double> ref(p.o_elements());
  reference_attention_fp64(p, t.q.data(), t.k.data(), t.v.data(), t.block_table.empty() ? nullptr : t.block_table.data(),
                           ref.data(), t.sinks.empty() ? nullptr : t.sinks.data());
  double num = 0, den = 0, max_abs = 0;
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) {
      bad++;
      continue;
    }
    double e = got[i] - ref[i];
    num += e * e;
    den += ref[i] * ref[i];
    max_abs = std::max(max_abs, std::fabs(e));
  }
  double rel = std::sqrt(num / den);
  std::printf("  %-60s rel_l2 %.2e max_abs %.2e\n", p.label().c_str(), rel, max_abs);
  EXPECT_EQ(bad, 0);
  EXPECT_TRUE(rel < 1e-5);
  EXPECT_TRUE(max_abs < 1e-5);
}

}  // namespace

TEST(CudaReference, reference_matches_cpu_fp64_small_shapes) {
  std::uint64_t seed = 1;
  for (DType dt : {DType::fp16, DType::bf16})
    for (bool causal : {false, true})
      for (KvLayout layout : {KvLayout::contiguous, KvLayout::paged})
        for (std::int64_t D : {64, 128}) check_against_fp64(make_problem(1, 1, 37, D, 5, 0, layout, dt, causal), seed++);
}

TEST(CudaReference, reference_matches_cpu_fp64_multi_head) {
  check_against_fp64(make_problem(2, 3, 53, 64, 4, 0, KvLayout::paged, DType::fp16, true), 100);
  check_against_fp64(make_problem(2, 3, 130, 128, 1, 0, KvLayout::contiguous, DType::bf16, false), 101);
  check_against_fp64(make_problem(1, 2, 200, 32, 0, 64, KvLayout::paged, DType::bf16, false), 102);
}

// The sliding window, soft-cap and sinks (issue 47): a window of 1, one ending inside a page, one longer than the
// sequence, with GQA, q_len < KV length, ragged lengths, the cap, and each head's sink in its denominator.
TEST(CudaReference, reference_applies_the_window_and_the_cap) {
  std::uint64_t seed = 300;
  for (std::int64_t window : {1, 13, 500})
    for (bool causal : {false, true}) {
      ProblemSpec s;
      s.batch = 3;
      s.heads = 4;
      s.kv_heads = 2;
      s.q_len = 5;
      s.head_dim = 64;
      s.page_size = 16;
      s.kv_layout = KvLayout::paged;
      s.dtype = DType::bf16;
      s.causal = causal;
      s.kv_lens = {37, 9, 64};
      s.window = window;
      s.softcap = window == 13 ? 2 : 0;
      s.sinks = window != 13 || causal;
      check_against_fp64(make_problem(s), seed++);
    }
}

// A value head dim of its own: MLA's 576 / 512 (one KV head, 64-token pages, a short last page) and V narrower
// and wider than K on a ragged causal batch.
TEST(CudaReference, reference_reads_v_and_writes_o_at_their_width) {
  ProblemSpec mla{2, 16, 1, 300, 2, 576, 0, 64, KvLayout::paged, DType::bf16, false, {}, "", 0, 0};
  mla.head_dim_v = 512;
  check_against_fp64(make_problem(mla), 400);
  for (auto [d, dv] : {std::pair<std::int64_t, std::int64_t>{40, 24}, {24, 40}}) {
    ProblemSpec s{3, 4, 2, 0, 5, d, 0, 16, KvLayout::contiguous, DType::fp16, true, {37, 9, 64}, "list", 0, 0};
    s.head_dim_v = dv;
    check_against_fp64(make_problem(s), 401 + static_cast<std::uint64_t>(d));
  }
}

TEST(CudaReference, reference_runs_default_shape_quickly) {
  Backend& be = *gpu();
  Problem p = make_problem(32, 12, 512, 64, 1, 0, KvLayout::contiguous, DType::fp16, false);
  std::size_t n = static_cast<std::size_t>(p.q_elements());
  Buffer q(be.memory(), n * 2), k(be.memory(), (n + kv_slack_rows(p) * 64) * 2), v(be.memory(), (n + kv_slack_rows(p) * 64) * 2), out(be.memory(), n * 4);
  be.memory().fill_bytes(q.get(), 0x3c, n * 2);  // 0x3c3c: a small fp16 value everywhere
  be.memory().fill_bytes(k.get(), 0x3c, k.bytes());
  be.memory().fill_bytes(v.get(), 0x3c, v.bytes());
  AttentionIO io;
  io.q = q.get();
  io.k = k.get();
  io.v = v.get();
  be.verifier().reference_attention(p, io, out.as<float>());  // warm-up (module load)
  be.memory().synchronize();
  auto t0 = std::chrono::steady_clock::now();
  be.verifier().reference_attention(p, io, out.as<float>());
  be.memory().synchronize();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("  reference at %s: %.1f ms\n", p.label().c_str(), ms);
  EXPECT_TRUE(ms < 1000.0);
  float first = 0;
  be.memory().download(&first, out.get(), 4);
  EXPECT_NEAR(first, 1.05859375, 1e-6);  // equal scores average equal values: V itself (fp16 0x3c3c)
}

int main(int argc, char** argv) {
  if (ab::cuda_device_count() == 0) attnbench_testing::skip_test_program("no CUDA device");
  int rc = attnbench_testing::run_all_tests(argc, argv);
  gpu().reset();
  return rc;
}

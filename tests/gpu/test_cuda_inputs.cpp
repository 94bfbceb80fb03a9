// The random inputs drawn on the GPU (DeviceMemory::fill_random, kernels/random_inputs.cu) against the host's
// make_random_inputs, bit for bit: fp16 and bf16, contiguous with its zeroed slack rows, paged with a short
// last page, page size 1, ragged lengths, GQA and MQA, a value head dim of its own, B=1 H=1 q_len=1; the rows
// the placement puts nowhere keep what was there; and the draw's speed on a large cache (printed).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "backends/cuda/cuda_backend.hpp"
#include "core/random_inputs.hpp"
#include "run/problem_inputs.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

std::unique_ptr<Backend>& gpu() {
  static std::unique_ptr<Backend> b = make_cuda_backend(0);
  return b;
}

std::vector<std::uint16_t> download(Backend& be, const void* src, std::size_t elements) {
  std::vector<std::uint16_t> out(elements, 0x5A5A);
  be.memory().synchronize();
  be.memory().download(out.data(), src, elements * sizeof(std::uint16_t));
  return out;
}

// Index of the first element where a and b differ, or -1.
std::int64_t first_difference(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return static_cast<std::int64_t>(i);
  return -1;
}

// ProblemInputs on the GPU holds make_random_inputs(p, seed): Q, K, V, the block table, the sinks.
void check_same_as_host(const Problem& p, std::uint64_t seed) {
  Backend& be = *gpu();
  const HostTensors host = make_random_inputs(p, seed);
  ProblemInputs in(be, p, seed, false);
  const AttentionIO io = in.io();
  const bool paged = p.kv_layout == KvLayout::paged;
  std::printf("  %s\n", p.label().c_str());
  EXPECT_EQ(first_difference(download(be, io.q, host.q.size()), host.q), -1) << "Q of " << p.label();
  // Contiguous K/V carry kv_slack_rows zeroed rows after the tensor: compared as zeros.
  std::vector<std::uint16_t> k = host.k, v = host.v;
  if (!paged) {
    k.resize(k.size() + kv_slack_rows(p) * p.head_dim, 0);
    v.resize(v.size() + kv_slack_rows(p) * p.head_dim_v, 0);
  }
  EXPECT_EQ(first_difference(download(be, io.k, k.size()), k), -1) << "K of " << p.label();
  EXPECT_EQ(first_difference(download(be, io.v, v.size()), v), -1) << "V of " << p.label();
  if (paged) {
    std::vector<std::int32_t> table(host.block_table.size());
    be.memory().download(table.data(), io.block_table, table.size() * sizeof(std::int32_t));
    EXPECT_EQ(table, host.block_table);
  }
  if (p.sinks) {
    std::vector<float> sinks(host.sinks.size());
    be.memory().download(sinks.data(), io.sinks, sinks.size() * sizeof(float));
    EXPECT_EQ(0, std::memcmp(sinks.data(), host.sinks.data(), sinks.size() * sizeof(float)));
  }
}

Problem problem(std::int64_t batch, std::int64_t heads, std::int64_t kv_heads, std::int64_t seq_len, std::int64_t q_len,
                std::int64_t head_dim, KvLayout layout, std::int64_t page_size, DType dtype) {
  ProblemSpec s;
  s.batch = batch;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.seq_len = seq_len;
  s.q_len = q_len;
  s.head_dim = head_dim;
  s.kv_layout = layout;
  if (layout == KvLayout::paged) s.page_size = page_size;
  else s.pages = 1;
  s.dtype = dtype;
  return make_problem(s);
}

}  // namespace

TEST(CudaInputs, contiguous_equal_the_host_draw) {
  check_same_as_host(problem(3, 6, 2, 77, 5, 64, KvLayout::contiguous, 0, DType::fp16), 1);
  check_same_as_host(problem(1, 1, 1, 1, 1, 128, KvLayout::contiguous, 0, DType::bf16), 2);
  check_same_as_host(problem(2, 8, 1, 300, 300, 40, KvLayout::contiguous, 0, DType::bf16), 3);
}

TEST(CudaInputs, paged_equal_the_host_draw) {
  // A short last page (77 = 4 pages of 16 + 13), page size 1, MQA, one sequence.
  check_same_as_host(problem(3, 6, 2, 77, 1, 64, KvLayout::paged, 16, DType::bf16), 4);
  check_same_as_host(problem(2, 4, 1, 19, 3, 128, KvLayout::paged, 1, DType::fp16), 5);
  check_same_as_host(problem(1, 1, 1, 33, 1, 96, KvLayout::paged, 32, DType::fp16), 6);
}

TEST(CudaInputs, ragged_sinks_and_a_value_head_dim_equal_the_host_draw) {
  ProblemSpec s;
  s.batch = 4;
  s.heads = 16;
  s.kv_heads = 1;
  s.seq_len = 0;
  s.q_len = 2;
  s.head_dim = 576;
  s.head_dim_v = 512;
  s.kv_lens = {70, 3, 129, 64};
  s.seq_len = 129;
  s.page_size = 64;
  s.kv_layout = KvLayout::paged;
  s.dtype = DType::bf16;
  s.sinks = true;
  check_same_as_host(make_problem(s), 7);
  s.kv_layout = KvLayout::contiguous;
  s.page_size = 0;
  s.pages = 1;
  s.dtype = DType::fp16;
  check_same_as_host(make_problem(s), 8);
}

// Rows past a sequence's length have no page: the draw leaves whatever the pool held there.
TEST(CudaInputs, rows_without_a_page_are_left_alone) {
  Backend& be = *gpu();
  ProblemSpec s;
  s.batch = 3;
  s.heads = 2;
  s.kv_heads = 2;
  s.q_len = 1;
  s.head_dim = 64;
  s.kv_lens = {5, 40, 17};
  s.seq_len = 40;
  s.page_size = 16;
  s.kv_layout = KvLayout::paged;
  s.dtype = DType::fp16;
  const Problem p = make_problem(s);
  const HostTensors host = make_random_inputs(p, 11);
  Buffer table(be.memory(), host.block_table.size() * 4), lens(be.memory(), p.batch * 4), k(be.memory(), host.k.size() * 2);
  const std::vector<std::int32_t> lens_host = kv_lens_of(p);
  be.memory().upload(table.get(), host.block_table.data(), table.bytes());
  be.memory().upload(lens.get(), lens_host.data(), lens.bytes());
  be.memory().fill_bytes(k.get(), 0xAB, k.bytes());
  be.memory().fill_random(k.get(), input_fill(p, InputTensor::k, 11, table.as<std::int32_t>(), lens.as<std::int32_t>()));
  const std::vector<std::uint16_t> got = download(be, k.get(), host.k.size());
  std::int64_t drawn = 0, kept = 0;
  for (std::int64_t row = 0; row < p.batch * p.kv_heads * p.seq_len; ++row) {
    const std::int64_t s_pos = row % p.seq_len, b = row / p.seq_len / p.kv_heads;
    if (s_pos < p.kv_len(b)) ++drawn;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] == 0xABAB) {
      ++kept;
      EXPECT_EQ(host.k[i], 0) << "element " << i << " has a page but was not drawn";
    } else {
      EXPECT_EQ(got[i], host.k[i]) << "element " << i;
    }
  }
  EXPECT_EQ(static_cast<std::int64_t>(got.size()) - kept, drawn * p.head_dim);
  EXPECT_GT(kept, 0);
}

// How long a 1 GB paged K/V cache takes to draw (B=8, 32k keys, 8 KV heads, D=128): printed, not a target;
// its Q checked against the host's draw.
TEST(CudaInputs, large_cache_draw_speed) {
  Backend& be = *gpu();
  const Problem p = problem(8, 32, 8, 32768, 1, 128, KvLayout::paged, 16, DType::bf16);
  const auto t0 = std::chrono::steady_clock::now();
  ProblemInputs in(be, p, 3, false);
  be.memory().synchronize();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double gb = 2.0 * static_cast<double>(p.pool_elements()) * 2 / 1e9;
  std::printf("  %s: K and V (%.2f GB) drawn in %.3f s (%.1f GB/s), with allocation\n", p.label().c_str(), gb, s, gb / s);
  std::vector<std::uint16_t> q(p.q_elements());
  draw_random_host(q.data(), input_fill(p, InputTensor::q, 3, nullptr, nullptr));
  EXPECT_EQ(first_difference(download(be, in.io().q, q.size()), q), -1);
}

int main(int argc, char** argv) {
  if (ab::cuda_device_count() == 0) attnbench_testing::skip_test_program("no CUDA device");
  int rc = attnbench_testing::run_all_tests(argc, argv);
  gpu().reset();
  return rc;
}

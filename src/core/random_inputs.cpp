// A problem's random inputs on the host: the tensors' draws, the page placement, the sink logits.
#include "core/random_inputs.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "core/dtype.hpp"
#include "core/parallel.hpp"

namespace ab {

RandomFill input_fill(const Problem& p, InputTensor which, std::uint64_t seed, const std::int32_t* block_table,
                      const std::int32_t* kv_lens) {
  RandomFill f;
  f.key = input_stream_key(seed, which);
  f.bf16 = p.dtype == DType::bf16;
  if (which == InputTensor::q) {
    f.width = p.head_dim;
    f.rows = p.q_elements() / p.head_dim;
    return f;
  }
  f.width = which == InputTensor::v ? p.head_dim_v : p.head_dim;
  f.rows = p.batch * p.kv_heads * p.seq_len;
  if (p.kv_layout == KvLayout::paged) {
    f.placement.block_table = block_table;
    f.placement.kv_lens = kv_lens;
    f.placement.kv_heads = p.kv_heads;
    f.placement.seq_len = p.seq_len;
    f.placement.page_size = p.page_size;
    f.placement.pages = p.pages;
  }
  return f;
}

std::vector<std::int32_t> random_block_table(const Problem& p, std::uint64_t seed) {
  if (p.kv_layout != KvLayout::paged) return {};
  std::vector<std::int32_t> slots(p.pool_slots());
  std::iota(slots.begin(), slots.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(slots.begin(), slots.end(), rng);
  std::vector<std::int32_t> table(p.batch * p.pages, -1);
  std::size_t next = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t pg = 0; pg < p.pages_of(b); ++pg) table[b * p.pages + pg] = slots[next++];
  return table;
}

std::vector<std::int32_t> kv_lens_of(const Problem& p) {
  std::vector<std::int32_t> lens(static_cast<std::size_t>(p.batch));
  for (std::int64_t b = 0; b < p.batch; ++b) lens[b] = static_cast<std::int32_t>(p.kv_len(b));
  return lens;
}

std::vector<std::int32_t> q_lens_of(const Problem& p) {
  std::vector<std::int32_t> lens(static_cast<std::size_t>(p.batch));
  for (std::int64_t b = 0; b < p.batch; ++b) lens[b] = static_cast<std::int32_t>(p.q_len_of(b));
  return lens;
}

// Sink logits in [-1, 5): against scaled scores of about ±1 they take from a few percent to most of a short
// row's softmax, so an output that leaves them out fails verification.
std::vector<float> random_sinks(const Problem& p, std::uint64_t seed) {
  if (!p.sinks) return {};
  const std::uint64_t key = input_stream_key(seed, InputTensor::sinks);
  std::vector<float> sinks(static_cast<std::size_t>(p.heads));
  for (std::size_t h = 0; h < sinks.size(); ++h) sinks[h] = input_uniform(key, static_cast<std::int64_t>(h), -1.0f, 5.0f);
  return sinks;
}

void draw_random_host(std::uint16_t* dst, const RandomFill& f) {
  const DType t = f.bf16 ? DType::bf16 : DType::fp16;
  parallel_for(f.rows, static_cast<double>(f.rows) * static_cast<double>(f.width) * 8, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t row = lo; row < hi; ++row) {
      const std::int64_t at = f.placement.place(row);
      if (at < 0) continue;
      std::uint16_t* out = dst + at * f.width;
      for (std::int64_t d = 0; d < f.width; ++d) out[d] = float_to_bits(input_uniform(f.key, row * f.width + d), t);
    }
  });
}

HostTensors make_random_inputs(const Problem& p, std::uint64_t seed) {
  HostTensors t;
  const bool paged = p.kv_layout == KvLayout::paged;
  t.block_table = random_block_table(p, seed);
  const std::vector<std::int32_t> lens = kv_lens_of(p);
  t.q.resize(p.q_elements());
  t.k.assign(paged ? p.pool_elements() : p.kv_elements(), 0);
  t.v.assign(paged ? p.v_pool_elements() : p.v_elements(), 0);
  draw_random_host(t.q.data(), input_fill(p, InputTensor::q, seed, nullptr, nullptr));
  draw_random_host(t.k.data(), input_fill(p, InputTensor::k, seed, t.block_table.data(), lens.data()));
  draw_random_host(t.v.data(), input_fill(p, InputTensor::v, seed, t.block_table.data(), lens.data()));
  t.sinks = random_sinks(p, seed);
  return t;
}

}  // namespace ab

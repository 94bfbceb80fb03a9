// The random inputs' values, one definition for the host (core/random_inputs.cpp) and the GPU
// (kernels/random_inputs.cu): each tensor (Q, K, V, the sink logits) is a counter-based stream whose element i
// is a hash of (seed, tensor, i), i the element's logical index (K/V in the contiguous [B,KVH,S,width] order
// whatever the layout). Any element is drawn on its own, so a 34 GB K/V cache is drawn where it lives, in
// parallel, and a paged problem holds the same values as the contiguous one. Every operation below is exact
// or correctly rounded once, so the host and the device draw the same bits (tests/gpu/test_cuda_inputs.cpp).
#pragma once
#include <cmath>
#include <cstdint>

#include "core/host_device.hpp"

namespace ab {

enum class InputTensor : std::uint64_t { q = 1, k = 2, v = 3, sinks = 4 };

// splitmix64's finalizer: a bijection that spreads every input bit.
AB_HOST_DEVICE inline std::uint64_t input_mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The stream of tensor `which` for `seed`.
AB_HOST_DEVICE inline std::uint64_t input_stream_key(std::uint64_t seed, InputTensor which) {
  return input_mix64(seed ^ input_mix64(static_cast<std::uint64_t>(which) * 0x9e3779b97f4a7c15ULL));
}

// Element i of stream `key`: a float in [lo, hi) with 24 random bits (below hi also where rounding to float
// would reach it). With lo, hi small integers (the inputs' [-1, 1), the sinks' [-1, 5)) every double step is
// exact; the device's explicit roundings keep a fused multiply-add from changing that elsewhere.
AB_HOST_DEVICE inline float input_uniform(std::uint64_t key, std::int64_t i, float lo = -1.0f, float hi = 1.0f) {
  const std::uint64_t r = input_mix64(key + static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL);
  const double unit = static_cast<double>(r >> 40) / 16777216.0;
#if defined(__CUDA_ARCH__)
  const auto x = static_cast<float>(__dadd_rn(lo, __dmul_rn(static_cast<double>(hi) - lo, unit)));
  return x < hi ? x : nextafterf(hi, lo);
#else
  const auto x = static_cast<float>(lo + (static_cast<double>(hi) - lo) * unit);
  return x < hi ? x : std::nextafter(hi, lo);
#endif
}

// Where logical row `row` (of [B, KVH, S] rows) of a K or V tensor is stored: at the same row when contiguous
// (block_table null), else at its page's pool slot through the block table, or nowhere (-1) past its
// sequence's length, where no page holds it. Pointers are in the memory of whoever reads them.
struct KvRowPlacement {
  const std::int32_t* block_table = nullptr;  // [B, pages]; null: contiguous
  const std::int32_t* kv_lens = nullptr;      // [B] (paged only)
  std::int64_t kv_heads = 1, seq_len = 1, page_size = 1, pages = 1;

  AB_HOST_DEVICE std::int64_t place(std::int64_t row) const {
    if (!block_table) return row;
    const std::int64_t s = row % seq_len, bh = row / seq_len, b = bh / kv_heads, h = bh % kv_heads;
    if (s >= kv_lens[b]) return -1;
    const std::int64_t slot = block_table[b * pages + s / page_size];
    return (slot * kv_heads + h) * page_size + s % page_size;
  }
};

// One tensor's draw: logical element i = row * width + d (i below rows * width) of stream `key`, converted to
// fp16 or bf16 bits, stored at element place(row) * width + d of the destination.
struct RandomFill {
  std::uint64_t key = 0;
  bool bf16 = false;  // else fp16
  std::int64_t rows = 0, width = 1;
  KvRowPlacement placement;
};

}  // namespace ab

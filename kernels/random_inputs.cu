// The random-input draw on the GPU: one thread an element of a logical row, grid-stride; each element is
// input_uniform of its logical index (core/input_stream.hpp), rounded to fp16 or bf16 (round to nearest even,
// as the host's float_to_bits) and stored where the placement puts its row. A B=256, 32k-key K/V cache
// (34 GB) is drawn in tens of milliseconds where the host's cores took tens of seconds.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "random_inputs.hpp"

namespace ab::kernels {

namespace {

template <bool kBf16>
__global__ void random_fill_kernel(std::uint16_t* dst, RandomFill f) {
  const std::int64_t total = f.rows * f.width;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const std::int64_t row = i / f.width, at = f.placement.place(row);
    if (at < 0) continue;
    const float x = input_uniform(f.key, i);
    std::uint16_t bits;
    if constexpr (kBf16) {
      bits = __bfloat16_as_ushort(__float2bfloat16_rn(x));
    } else {
      bits = __half_as_ushort(__float2half_rn(x));
    }
    dst[at * f.width + i % f.width] = bits;
  }
}

}  // namespace

int launch_random_fill(void* dst, const RandomFill& fill, void* stream) {
  const std::int64_t total = fill.rows * fill.width;
  if (total <= 0) return 0;
  if (!dst || (fill.placement.block_table && !fill.placement.kv_lens)) return static_cast<int>(cudaErrorInvalidValue);
  const int block = 256;
  std::int64_t blocks = (total + block - 1) / block;
  if (blocks > 65536) blocks = 65536;
  auto* out = static_cast<std::uint16_t*>(dst);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (fill.bf16) random_fill_kernel<true><<<static_cast<unsigned>(blocks), block, 0, s>>>(out, fill);
  else random_fill_kernel<false><<<static_cast<unsigned>(blocks), block, 0, s>>>(out, fill);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace ab::kernels

// The launch the row-wise softmax kernels share (softmax_update.cu, page_softmax.cu), one definition: the score
// and probability dtypes a launcher is instantiated for, and the grid of one group of threads per row with the
// kernel instance row_config picks (CHUNKS 1..4 with or without 16-byte vectors, or the long-row kernel).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/dtype.hpp"          // DType
#include "core/key_mask.hpp"       // KeyMask
#include "primitive_device.cuh"  // RowConfig

namespace ab::kernels::dev {

template <class T>
struct TypeTag {
  using type = T;
};

// typed(TypeTag<TS>, TypeTag<TP>) for the pairs the kernels are built for: fp16 or bf16 probabilities from
// scores of the same type or fp32. Other pairs: cudaErrorInvalidValue.
template <class Typed>
int dispatch_score_prob(DType score_type, DType prob_type, Typed typed) {
  if (prob_type == DType::fp16) {
    if (score_type == DType::fp16) return typed(TypeTag<__half>{}, TypeTag<__half>{});
    if (score_type == DType::fp32) return typed(TypeTag<float>{}, TypeTag<__half>{});
  } else if (prob_type == DType::bf16) {
    if (score_type == DType::bf16) return typed(TypeTag<__nv_bfloat16>{}, TypeTag<__nv_bfloat16>{});
    if (score_type == DType::fp32) return typed(TypeTag<float>{}, TypeTag<__nv_bfloat16>{});
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

// Launches the instance of a row-kernel family (page_softmax, softmax_update) that the rows need: pick(chunks,
// vec, modifies) returns it (a __global__ function of Params), with chunks an std::integral_constant<int> (0: the
// long-row kernel), vec an std::integral_constant<bool> and modifies one that says the key mask has a window or
// a soft-cap (the family's WindowCap instance; the others run none of that code). Returns the launch's
// cudaError_t.
template <class Params, class Pick>
int launch_rows(const Params& p, std::int64_t total_rows, const RowConfig& rc, bool vec, const KeyMask& mask,
                cudaStream_t stream, Pick pick) {
  const std::int64_t blocks = (total_rows + rc.rows_per_block - 1) / rc.rows_per_block;
  if (blocks > 0x7fffffff) return static_cast<int>(cudaErrorInvalidConfiguration);
  const dim3 grid(static_cast<unsigned>(blocks)), block(rc.block);
  using Off = std::false_type;
  using On = std::true_type;
  const bool modifies = mask.window > 0 || mask.softcap > 0;
  auto launch = [&](auto c, auto v) {
    auto kernel = modifies ? pick(c, v, On{}) : pick(c, v, Off{});
    kernel<<<grid, block, 0, stream>>>(p);
  };
  auto chunks = [&](auto c) {
    if (vec) launch(c, On{});
    else launch(c, Off{});
  };
  if (rc.long_rows) {
    launch(std::integral_constant<int, 0>{}, Off{});
  } else {
    switch (rc.chunks) {
      case 1: chunks(std::integral_constant<int, 1>{}); break;
      case 2: chunks(std::integral_constant<int, 2>{}); break;
      case 3: chunks(std::integral_constant<int, 3>{}); break;
      case 4: chunks(std::integral_constant<int, 4>{}); break;
      default: return static_cast<int>(cudaErrorInvalidConfiguration);
    }
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace ab::kernels::dev

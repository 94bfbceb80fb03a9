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

// Launches `total_rows` rows of rc's geometry: launch(chunks, vec, grid, block) with chunks an
// std::integral_constant<int> (0: the long-row kernel) and vec an std::integral_constant<bool>, which the
// caller turns into its kernel's template arguments. Returns the launch's cudaError_t.
template <class Launch>
int launch_rows(std::int64_t total_rows, const RowConfig& rc, bool vec, Launch launch) {
  const std::int64_t blocks = (total_rows + rc.rows_per_block - 1) / rc.rows_per_block;
  if (blocks > 0x7fffffff) return static_cast<int>(cudaErrorInvalidConfiguration);
  const dim3 grid(static_cast<unsigned>(blocks)), block(rc.block);
  using Off = std::false_type;
  using On = std::true_type;
  auto chunks = [&](auto c) {
    if (vec) launch(c, On{}, grid, block);
    else launch(c, Off{}, grid, block);
  };
  if (rc.long_rows) {
    launch(std::integral_constant<int, 0>{}, Off{}, grid, block);
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

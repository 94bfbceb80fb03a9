// attnbench's element types (enum ab_dtype) as the CUDA types FlashInfer's templates take.
#pragma once
#include <attnbench/plugin.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace abfi {

template <int kDType>
struct ElementType;
template <>
struct ElementType<AB_DTYPE_FP16> {
  using type = half;
};
template <>
struct ElementType<AB_DTYPE_BF16> {
  using type = nv_bfloat16;
};

}  // namespace abfi

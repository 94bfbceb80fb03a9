// The decode peer's view of one compiled FlashInfer batch decode (an element type and a head_dim): what setup
// hands it, and the function that plans it. decode_instance.cuh defines prepare_decode; one generated .cu per
// (dtype, head_dim) instantiates it; decode_instances.inc (generated) lists those compiled.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "common/device_allocations.hpp"
#include "common/device_page_table.hpp"
#include "common/page_table.hpp"
#include "common/prepared_forward.hpp"

namespace abfi {

struct DecodeInputs {
  const void* q;  // [B, H, 1, D]: FlashInfer's [B, H, D]
  const void* k;  // pages as `pages` describes
  const void* v;
  void* o;        // [B, H, 1, D]
  uint32_t num_qo_heads = 0;
  float sm_scale = 0.f;
  const PageTable* pages = nullptr;  // per sequence; its host indptr is what FlashInfer plans from
  DevicePageTable pages_d;
  cudaStream_t stream = nullptr;
  int32_t window_left = -1;     // FlashInfer's sliding window (keys before the query's position it sees); -1: none
  float logits_soft_cap = 0.f;  // FlashInfer's logit soft-cap; 0: none
};

// Which of FlashInfer's DefaultAttention variants an instance is: none (FlashInfer's default), the sliding window,
// or the sliding window with the logit soft-cap (its window_left -1 is no window).
enum DecodeVariant : int { kPlainDecode = 0, kWindowDecode = 1, kWindowCapDecode = 2 };

// FlashInfer's DecodePlan (the split-KV work partition) for `in`, its workspaces allocated in `mem`, and the
// launch of BatchDecodeWithPagedKVCacheDispatched it planned. Throws CudaFailure or flashinfer::Error.
template <int kDType, int kHeadDim, int kVariant>
std::unique_ptr<PreparedForward> prepare_decode(const DecodeInputs& in, DeviceAllocations& mem);

}  // namespace abfi

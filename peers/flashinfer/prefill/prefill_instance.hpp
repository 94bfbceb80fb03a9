// The prefill peer's view of one compiled FlashInfer FA2 paged prefill kernel family (element type, head_dim,
// causal or not, query tile): what setup hands it and the function that prepares its launch.
// prefill_instance.cuh defines prepare_prefill; one generated .cu per instance instantiates it;
// prefill_instances.inc (generated) lists those compiled.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "common/device_page_table.hpp"
#include "common/page_table.hpp"
#include "common/prepared_forward.hpp"
#include "prefill/prefill_plan.hpp"

namespace abfi {

struct PrefillInputs {
  const void* q;  // token-major [B * q_len, H, D] (plugin.h), addressed through q_indptr and the two strides
  const void* k;  // pages as `pages` describes
  const void* v;
  void* o;        // token-major [B * q_len, H, D]: FlashInfer's [tokens, num_qo_heads, D]
  uint32_t num_qo_heads = 0;  // query heads of one request
  int32_t q_stride_n = 0;     // elements between a request's consecutive queries
  int32_t q_stride_h = 0;     // elements between its consecutive query heads
  float sm_scale = 0.f;
  const PageTable* pages = nullptr;
  DevicePageTable pages_d;
  int32_t* q_indptr_d = nullptr;  // [requests + 1]: first query row of each request
  const PrefillPlan* plan = nullptr;
  cudaStream_t stream = nullptr;
  int32_t window_left = -1;     // FlashInfer's sliding window (as planned: plan_prefill's window_left); -1: none
  float logits_soft_cap = 0.f;  // FlashInfer's logit soft-cap; 0: none
};

// Which of FlashInfer's DefaultAttention variants an instance is: none (FlashInfer's default), the sliding window,
// or the sliding window with the logit soft-cap (its window_left -1 is no window).
enum PrefillVariant : int { kPlainPrefill = 0, kWindowPrefill = 1, kWindowCapPrefill = 2 };

// BatchPrefillWithPagedKVCacheDispatched's parameters for `in` (whose plan chose kCtaTileQ), ready to launch.
template <int kDType, int kHeadDim, bool kCausal, int kCtaTileQ, int kVariant>
std::unique_ptr<PreparedForward> prepare_prefill(const PrefillInputs& in);

}  // namespace abfi

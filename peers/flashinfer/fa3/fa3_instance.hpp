// The flashinfer-fa3 peer's view of one compiled FlashInfer FA3 (Hopper) paged prefill kernel (element type,
// head_dim, causal or not, the scheduler its plan picks, and whether it applies FlashInfer's left sliding
// window): what setup hands it and the function that prepares its launch. fa3_instance.cuh defines prepare_fa3; one generated .cu per instance instantiates it;
// fa3_instances.inc (generated) lists those compiled.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "common/page_table.hpp"
#include "common/prepared_forward.hpp"
#include "fa3/fa3_plan.hpp"

namespace abfi {

struct Fa3Inputs {
  const void* q;  // token-major [B * q_len, H, D] (plugin.h): FlashInfer's [tokens, num_qo_heads, D]
  const void* k;  // pages as `pages` describes (HND strides: page, head, token)
  const void* v;
  void* o;        // token-major [B * q_len, H, D]
  int64_t tokens = 0;         // rows of Q and O (B * q_len)
  uint32_t num_qo_heads = 0;  // query heads of one request
  float sm_scale = 0.f;
  const PageTable* pages = nullptr;
  const int32_t* page_indices_d = nullptr;  // the page numbers (device), what the plan's kv_indptr points into
  const Fa3Plan* plan = nullptr;
  cudaStream_t stream = nullptr;
  int32_t window_left = -1;  // FlashInfer's left sliding window (keys before a query's position it sees; the
                             // window instances only); -1: none
};

// BatchPrefillWithPagedKVCacheDispatched's parameters for `in` (whose plan chose the scheduler), ready to launch.
template <int kDType, int kHeadDim, bool kCausal, bool kSameScheduleForAllHeads, bool kWindow>
std::unique_ptr<PreparedForward> prepare_fa3(const Fa3Inputs& in);

}  // namespace abfi

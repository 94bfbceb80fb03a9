// FlashInfer's FA2 prefill plan (PrefillPlan: CTA tile, split-KV chunks, the work list) for one batch of
// requests, with its float/int workspaces allocated in setup. Setup time only.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "common/device_allocations.hpp"
#include "common/page_table.hpp"

namespace abfi {

struct PrefillPlan {
  std::vector<int64_t> info;  // flashinfer::PrefillPlanInfo::ToVector(), as FlashInfer's bindings keep it
  uint32_t cta_tile_q = 0;    // the query tile FlashInfer chose (16, 64 or 128): which kernel instance runs
  void* float_ws = nullptr;
  void* int_ws = nullptr;
};

// Plans `pages.requests` requests whose queries start at q_indptr_h (host, [requests + 1]) with num_qo_heads
// query heads each over pages.kv_heads KV heads, with FlashInfer's sliding window (window_left; -1: none, as its
// wrapper plans); waits for the plan's upload. Throws CudaFailure or
// flashinfer::Error.
PrefillPlan plan_prefill(const PageTable& pages, const std::vector<int32_t>& q_indptr_h, uint32_t num_qo_heads,
                         uint32_t head_dim, int32_t window_left, DeviceAllocations& mem, cudaStream_t stream);

}  // namespace abfi

// FlashInfer's FA3 (Hopper) prefill plan (PrefillSM90Plan: the query-tile x query-head work list, balanced over
// the GPU's SMs) for one batch of requests, its int workspace allocated in setup, and where the kernel finds each
// array of it. Setup time only.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "common/device_allocations.hpp"
#include "common/page_table.hpp"

namespace abfi {

struct Fa3Plan {
  // Which scheduler the kernel runs: one schedule for every query head (FlashInfer's choice past 4096 work items
  // per head) or the persistent per-head one. A kernel instance each.
  bool same_schedule_for_all_heads = false;
  // The plan's arrays in the int workspace (device), one entry per work item (work_indptr: one per SM + 1).
  int32_t* qo_tile_indices = nullptr;
  int32_t* qo_indptr = nullptr;
  int32_t* kv_indptr = nullptr;
  int32_t* qo_lens = nullptr;
  int32_t* kv_lens = nullptr;
  int32_t* head_indices = nullptr;
  int32_t* work_indptr = nullptr;
  int32_t* batch_indices = nullptr;
};

// Plans `pages.requests` requests whose queries start at q_indptr_h (host, [requests + 1]) with num_qo_heads
// query heads each over pages.kv_heads KV heads, causal (bottom-right) or not; waits for the plan's upload.
// Throws CudaFailure or flashinfer::Error.
Fa3Plan plan_fa3(const PageTable& pages, const std::vector<int32_t>& q_indptr_h, uint32_t num_qo_heads,
                 uint32_t head_dim, bool causal, DeviceAllocations& mem, cudaStream_t stream);

}  // namespace abfi

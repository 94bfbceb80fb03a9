// plan_prefill: FlashInfer's PrefillPlanWorkspaceSize then PrefillPlan with the arguments FlashInfer's Python
// wrapper passes by default (BatchPrefillWithPagedKVCacheWrapper.plan: no CUDA-graph planning, split-KV
// decided by the planner, the problem's sliding window (window_left), 16-bit K/V and output).
#include <flashinfer/attention/scheduler.cuh>

#include "common/message.hpp"
#include "prefill/prefill_plan.hpp"

namespace abfi {

PrefillPlan plan_prefill(const PageTable& pages, const std::vector<int32_t>& q_indptr_h, uint32_t num_qo_heads,
                         uint32_t head_dim, int32_t window_left, DeviceAllocations& mem, cudaStream_t stream) {
  std::vector<int32_t> qo_indptr = q_indptr_h;    // FlashInfer's planner takes mutable pointers
  std::vector<int32_t> kv_indptr = pages.indptr;  // in pages, as the paged wrapper passes it
  const uint32_t requests = pages.requests;
  const uint32_t total_rows = static_cast<uint32_t>(qo_indptr.back());
  const bool cuda_graph_plan = false;
  const uint32_t sizeof_o = 2, kv_bytes = 2;
  const int32_t fixed_split_size = -1;
  const bool disable_split_kv = false;
  const int64_t colocated_ctas = 0, uniform_q_len = 0;

  size_t float_bytes = 0, int_bytes = 0;
  check_cuda(flashinfer::PrefillPlanWorkspaceSize<int32_t>(
                 float_bytes, int_bytes, qo_indptr.data(), kv_indptr.data(), total_rows, requests, num_qo_heads,
                 pages.kv_heads, head_dim, head_dim, pages.page_size, cuda_graph_plan, sizeof_o, window_left,
                 fixed_split_size, disable_split_kv, colocated_ctas, uniform_q_len, stream, kv_bytes),
             "FlashInfer's PrefillPlanWorkspaceSize");
  PrefillPlan plan;
  plan.float_ws = mem.device(float_bytes, "cudaMalloc of FlashInfer's float workspace");
  plan.int_ws = mem.device(int_bytes, "cudaMalloc of FlashInfer's int workspace");
  void* int_ws_pinned = mem.pinned(int_bytes, "cudaMallocHost of FlashInfer's page-locked int workspace");
  flashinfer::PrefillPlanInfo info;
  check_cuda(flashinfer::PrefillPlan<int32_t>(plan.float_ws, float_bytes, plan.int_ws, int_ws_pinned, int_bytes,
                                              info, qo_indptr.data(), kv_indptr.data(), total_rows, requests,
                                              num_qo_heads, pages.kv_heads, head_dim, head_dim, pages.page_size,
                                              cuda_graph_plan, sizeof_o, window_left, fixed_split_size,
                                              disable_split_kv, colocated_ctas, uniform_q_len, stream, kv_bytes),
             "FlashInfer's PrefillPlan");
  check_cuda(cudaStreamSynchronize(stream), "waiting for FlashInfer's plan to reach the device");
  plan.info = info.ToVector();
  plan.cta_tile_q = static_cast<uint32_t>(info.cta_tile_q);
  return plan;
}

}  // namespace abfi

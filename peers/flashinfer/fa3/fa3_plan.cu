// plan_fa3: FlashInfer's PrefillSM90Plan with the arguments its binding (csrc/batch_prefill_sm90.cu,
// BatchPrefillWithKVCacheSM90Plan) and its Python wrapper pass by default: the page indptr as kv_indptr, each
// request's KV length from its pages and last-page length (flashinfer.page.get_seq_lens), no CUDA-graph planning,
// 16-bit output.
#include <flashinfer/attention/scheduler.cuh>

#include <algorithm>

#include "common/message.hpp"
#include "fa3/fa3_plan.hpp"

namespace abfi {

namespace {

// KV length of each request: (its pages - 1) * page_size + its last page's tokens.
std::vector<int32_t> kv_lengths(const PageTable& pages) {
  std::vector<int32_t> lens(pages.requests);
  for (uint32_t r = 0; r < pages.requests; ++r)
    lens[r] = (pages.indptr[r + 1] - pages.indptr[r] - 1) * static_cast<int32_t>(pages.page_size) +
              pages.last_page_len[r];
  return lens;
}

// PrefillSM90Plan has no workspace-size query (FlashInfer's wrapper hands it a fixed 8 MiB). Its int workspace
// holds 7 int32 arrays of one entry per work item (a query tile of one query head, tiles of at least 128 rows)
// and work_indptr (one entry per SM + 1), each 16-byte aligned: sized here for every head's tiles.
std::size_t int_workspace_bytes(const std::vector<int32_t>& q_indptr_h, uint32_t num_qo_heads, int sm_count) {
  constexpr int64_t kSmallestQueryTile = 128;
  int64_t tiles = 0;
  for (std::size_t r = 0; r + 1 < q_indptr_h.size(); ++r)
    tiles += (q_indptr_h[r + 1] - q_indptr_h[r] + kSmallestQueryTile - 1) / kSmallestQueryTile;
  const auto aligned = [](int64_t bytes) { return static_cast<std::size_t>((bytes + 15) / 16 * 16); };
  return 7 * aligned(4 * std::max<int64_t>(tiles, 1) * num_qo_heads) + aligned(4 * (int64_t{sm_count} + 1)) + 16;
}

}  // namespace

Fa3Plan plan_fa3(const PageTable& pages, const std::vector<int32_t>& q_indptr_h, uint32_t num_qo_heads,
                 uint32_t head_dim, bool causal, DeviceAllocations& mem, cudaStream_t stream) {
  std::vector<int32_t> qo_indptr = q_indptr_h;    // FlashInfer's planner takes mutable pointers
  std::vector<int32_t> kv_indptr = pages.indptr;  // in pages, as the paged wrapper passes it
  std::vector<int32_t> kv_len = kv_lengths(pages);
  const uint32_t total_rows = static_cast<uint32_t>(qo_indptr.back());
  const bool cuda_graph_plan = false;
  const uint32_t sizeof_o = 2;

  int device = 0, sm_count = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device),
             "reading the device's SM count");
  const std::size_t int_bytes = int_workspace_bytes(q_indptr_h, num_qo_heads, sm_count);
  void* int_ws = mem.device(int_bytes, "cudaMalloc of FlashInfer's int workspace");
  void* int_ws_pinned = mem.pinned(int_bytes, "cudaMallocHost of FlashInfer's page-locked int workspace");

  flashinfer::PrefillPlanSM90Info info;
  check_cuda(flashinfer::PrefillSM90Plan<int32_t>(
                 /*float_buffer=*/nullptr, /*float_workspace_size_in_bytes=*/0, int_ws, int_ws_pinned, int_bytes,
                 info, qo_indptr.data(), kv_indptr.data(), kv_len.data(), total_rows, pages.requests,
                 num_qo_heads, pages.kv_heads, head_dim, head_dim, pages.page_size, causal, cuda_graph_plan,
                 sizeof_o, stream),
             "FlashInfer's PrefillSM90Plan");
  check_cuda(cudaStreamSynchronize(stream), "waiting for FlashInfer's plan to reach the device");

  Fa3Plan plan;
  plan.same_schedule_for_all_heads = info.same_schedule_for_all_heads;
  using flashinfer::GetPtrFromBaseOffset;
  plan.qo_tile_indices = GetPtrFromBaseOffset<int32_t>(int_ws, info.qo_tile_indices_offset);
  plan.qo_indptr = GetPtrFromBaseOffset<int32_t>(int_ws, info.qo_indptr_offset);
  plan.kv_indptr = GetPtrFromBaseOffset<int32_t>(int_ws, info.kv_indptr_offset);
  plan.qo_lens = GetPtrFromBaseOffset<int32_t>(int_ws, info.qo_len_offset);
  plan.kv_lens = GetPtrFromBaseOffset<int32_t>(int_ws, info.kv_len_offset);
  plan.head_indices = GetPtrFromBaseOffset<int32_t>(int_ws, info.head_indices_offset);
  plan.work_indptr = GetPtrFromBaseOffset<int32_t>(int_ws, info.work_indptr_offset);
  plan.batch_indices = GetPtrFromBaseOffset<int32_t>(int_ws, info.batch_indices_offset);
  return plan;
}

}  // namespace abfi

// prepare_decode: FlashInfer's batch decode (BatchDecodeWithPagedKVCache, CUDA cores) planned and launched the
// way FlashInfer's own binding (csrc/batch_decode.cu) does it: the GQA group size dispatched for the work
// estimate, DecodePlan on the host page indptr into the int/float workspaces (copied to the device from a
// page-locked buffer), then BatchDecodeParams pointing into those workspaces. FlashInfer's DefaultAttention
// variant of the instance (none, the sliding window, or the window with the logit soft-cap: DecodeVariant);
// defaults everywhere else: no positional encoding, no PDL, CUDA-graph planning off.
#pragma once
#include <flashinfer/attention/decode.cuh>
#include <flashinfer/attention/default_decode_params.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/attention/variants.cuh>

#include "common/element_type.cuh"
#include "common/message.hpp"
#include "decode/decode_instance.hpp"

namespace abfi {

namespace decode_detail {

constexpr auto kNoPosEncoding = flashinfer::PosEncodingMode::kNone;
template <int kVariant>
using Variant = flashinfer::DefaultAttention</*custom_mask=*/false, /*sliding_window=*/kVariant != kPlainDecode,
                                             /*logits_soft_cap=*/kVariant == kWindowCapDecode, /*alibi=*/false>;

template <int kDType, int kHeadDim, int kVariant>
class PreparedDecode final : public PreparedForward {
 public:
  using T = typename ElementType<kDType>::type;
  using Params = flashinfer::BatchDecodeParams<T, T, T, int32_t>;

  PreparedDecode(const Params& params, T* tmp_v, float* tmp_s, cudaStream_t stream)
      : params_(params), tmp_v_(tmp_v), tmp_s_(tmp_s), stream_(stream) {}

  cudaError_t launch() override {
    return flashinfer::BatchDecodeWithPagedKVCacheDispatched<kHeadDim, kNoPosEncoding, Variant<kVariant>>(
        params_, tmp_v_, tmp_s_, /*enable_pdl=*/false, stream_);
  }

 private:
  Params params_;
  T* tmp_v_;     // split-KV partial outputs, or nullptr when the plan does not split
  float* tmp_s_;
  cudaStream_t stream_;
};

}  // namespace decode_detail

template <int kDType, int kHeadDim, int kVariant>
std::unique_ptr<PreparedForward> prepare_decode(const DecodeInputs& in, DeviceAllocations& mem) {
  using Prepared = decode_detail::PreparedDecode<kDType, kHeadDim, kVariant>;
  using T = typename Prepared::T;
  using Params = typename Prepared::Params;
  using decode_detail::kNoPosEncoding;
  using Variant = decode_detail::Variant<kVariant>;
  const PageTable& pages = *in.pages;
  const uint32_t batch = pages.requests;
  std::vector<int32_t> indptr_h = pages.indptr;  // FlashInfer's planner takes a mutable pointer
  const bool cuda_graph_plan = false;            // FlashInfer's default: the plan fits this batch only

  size_t float_bytes = 0, int_bytes = 0;
  cudaError_t status = cudaErrorInvalidValue;
  DISPATCH_GQA_GROUP_SIZE(in.num_qo_heads / pages.kv_heads, GROUP_SIZE, {
    status = flashinfer::DecodePlanWorkspaceSize<kHeadDim, kNoPosEncoding, Variant, Params>(
        float_bytes, int_bytes, indptr_h.data(), batch, in.num_qo_heads, pages.page_size, cuda_graph_plan,
        in.stream,
        flashinfer::BatchDecodeWithPagedKVCacheWorkEstimationDispatched<GROUP_SIZE, kHeadDim, kNoPosEncoding,
                                                                        Variant, Params>);
  });
  check_cuda(status, "FlashInfer's DecodePlanWorkspaceSize");
  void* float_ws = mem.device(float_bytes, "cudaMalloc of FlashInfer's float workspace");
  void* int_ws = mem.device(int_bytes, "cudaMalloc of FlashInfer's int workspace");
  void* int_ws_pinned = mem.pinned(int_bytes, "cudaMallocHost of FlashInfer's page-locked int workspace");

  flashinfer::DecodePlanInfo plan;
  DISPATCH_GQA_GROUP_SIZE(in.num_qo_heads / pages.kv_heads, GROUP_SIZE, {
    status = flashinfer::DecodePlan<kHeadDim, kNoPosEncoding, Variant, Params>(
        float_ws, float_bytes, int_ws, int_ws_pinned, int_bytes, plan, indptr_h.data(), batch, in.num_qo_heads,
        pages.page_size, cuda_graph_plan, in.stream,
        flashinfer::BatchDecodeWithPagedKVCacheWorkEstimationDispatched<GROUP_SIZE, kHeadDim, kNoPosEncoding,
                                                                        Variant, Params>);
  });
  check_cuda(status, "FlashInfer's DecodePlan");
  check_cuda(cudaStreamSynchronize(in.stream), "waiting for FlashInfer's plan to reach the device");

  T* k = static_cast<T*>(const_cast<void*>(in.k));
  T* v = static_cast<T*>(const_cast<void*>(in.v));
  Params params;
  params.q = static_cast<T*>(const_cast<void*>(in.q));
  params.paged_kv = flashinfer::paged_kv_t<T, int32_t>(pages.kv_heads, pages.page_size, kHeadDim, batch,
                                                       flashinfer::QKVLayout::kHND, k, v, pages.strides,
                                                       in.pages_d.indices, in.pages_d.indptr,
                                                       in.pages_d.last_page_len);
  params.o = static_cast<T*>(in.o);
  params.lse = nullptr;
  params.num_qo_heads = in.num_qo_heads;
  params.q_stride_n = static_cast<int32_t>(in.num_qo_heads * kHeadDim);
  params.q_stride_h = kHeadDim;
  params.window_left = kVariant == kPlainDecode ? -1 : in.window_left;
  params.logits_soft_cap = kVariant == kWindowCapDecode ? in.logits_soft_cap : 0.f;
  params.sm_scale = in.sm_scale;
  params.rope_rcp_scale = 1.f;
  params.rope_rcp_theta = 1.f;
  params.padded_batch_size = static_cast<uint32_t>(plan.padded_batch_size);
  params.request_indices = flashinfer::GetPtrFromBaseOffset<int32_t>(int_ws, plan.request_indices_offset);
  params.kv_tile_indices = flashinfer::GetPtrFromBaseOffset<int32_t>(int_ws, plan.kv_tile_indices_offset);
  params.o_indptr = flashinfer::GetPtrFromBaseOffset<int32_t>(int_ws, plan.o_indptr_offset);
  params.kv_chunk_size_ptr = flashinfer::GetPtrFromBaseOffset<int32_t>(int_ws, plan.kv_chunk_size_ptr_offset);
  params.block_valid_mask = nullptr;
  T* tmp_v = nullptr;
  float* tmp_s = nullptr;
  if (plan.split_kv) {
    tmp_v = flashinfer::GetPtrFromBaseOffset<T>(float_ws, plan.v_offset);
    tmp_s = flashinfer::GetPtrFromBaseOffset<float>(float_ws, plan.s_offset);
  }
  return std::make_unique<Prepared>(params, tmp_v, tmp_s, in.stream);
}

}  // namespace abfi

// prepare_prefill: FlashInfer's FA2 batch prefill over paged K/V (BatchPrefillWithPagedKVCacheDispatched) with
// BatchPrefillPagedParams filled the way FlashInfer's binding (csrc/batch_prefill_paged.cuh) fills its own:
// the plan's work list and split-KV buffers in the workspaces, K and V with the same strides, no custom mask,
// no positional encoding, FlashInfer's DefaultAttention variant of the instance (none, the sliding window, or the
// window with the logit soft-cap: PrefillVariant), fp32 QK accumulation, no PDL.
#pragma once
#include <flashinfer/attention/default_prefill_params.cuh>
#include <flashinfer/attention/mask.cuh>
#include <flashinfer/attention/prefill.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/attention/variants.cuh>

#include "common/element_type.cuh"
#include "prefill/prefill_instance.hpp"

namespace abfi {

namespace prefill_detail {

template <int kVariant>
using Variant = flashinfer::DefaultAttention</*custom_mask=*/false, /*sliding_window=*/kVariant != kPlainPrefill,
                                             /*logits_soft_cap=*/kVariant == kWindowCapPrefill, /*alibi=*/false>;

template <int kDType, int kHeadDim, bool kCausal, int kCtaTileQ, int kVariant>
class PreparedPrefill final : public PreparedForward {
 public:
  using T = typename ElementType<kDType>::type;
  using Params = flashinfer::BatchPrefillPagedParams<T, T, T, int32_t>;

  PreparedPrefill(const Params& params, T* tmp_v, float* tmp_s, cudaStream_t stream)
      : params_(params), tmp_v_(tmp_v), tmp_s_(tmp_s), stream_(stream) {}

  cudaError_t launch() override {
    constexpr auto mask = kCausal ? flashinfer::MaskMode::kCausal : flashinfer::MaskMode::kNone;
    return flashinfer::BatchPrefillWithPagedKVCacheDispatched<
        /*SAME_KV_STRIDES=*/true, kCtaTileQ, kHeadDim, kHeadDim, flashinfer::PosEncodingMode::kNone,
        /*USE_FP16_QK_REDUCTION=*/false, mask, Variant<kVariant>, Params>(params_, tmp_v_, tmp_s_,
                                                                            /*enable_pdl=*/false, stream_);
  }

 private:
  Params params_;
  T* tmp_v_;     // split-KV partial outputs, or nullptr when the plan does not split
  float* tmp_s_;
  cudaStream_t stream_;
};

}  // namespace prefill_detail

template <int kDType, int kHeadDim, bool kCausal, int kCtaTileQ, int kVariant>
std::unique_ptr<PreparedForward> prepare_prefill(const PrefillInputs& in) {
  using Prepared = prefill_detail::PreparedPrefill<kDType, kHeadDim, kCausal, kCtaTileQ, kVariant>;
  using T = typename Prepared::T;
  using Params = typename Prepared::Params;
  const PageTable& pages = *in.pages;
  flashinfer::PrefillPlanInfo plan;
  plan.FromVector(in.plan->info);
  void* int_ws = in.plan->int_ws;
  void* float_ws = in.plan->float_ws;

  T* k = static_cast<T*>(const_cast<void*>(in.k));
  T* v = static_cast<T*>(const_cast<void*>(in.v));
  Params params;
  params.q = static_cast<T*>(const_cast<void*>(in.q));
  params.paged_kv = flashinfer::paged_kv_t<T, int32_t>(pages.kv_heads, pages.page_size, kHeadDim, pages.requests,
                                                       flashinfer::QKVLayout::kHND, k, v, pages.strides,
                                                       in.pages_d.indices, in.pages_d.indptr,
                                                       in.pages_d.last_page_len);
  params.q_indptr = in.q_indptr_d;
  params.o = static_cast<T*>(in.o);
  params.lse = nullptr;
  params.num_qo_heads = in.num_qo_heads;
  params.group_size = flashinfer::uint_fastdiv(in.num_qo_heads / pages.kv_heads);
  params.q_stride_n = in.q_stride_n;
  params.q_stride_h = in.q_stride_h;
  params.window_left = kVariant == kPlainPrefill ? -1 : in.window_left;
  params.logits_soft_cap = kVariant == kWindowCapPrefill ? in.logits_soft_cap : 0.f;
  params.sm_scale = in.sm_scale;
  params.rope_rcp_scale = 1.f;
  params.rope_rcp_theta = 1.f;
  params.request_indices = flashinfer::GetPtrFromBaseOffset<int32_t>(int_ws, plan.request_indices_offset);
  params.qo_tile_indices = flashinfer::GetPtrFromBaseOffset<int32_t>(int_ws, plan.qo_tile_indices_offset);
  params.kv_tile_indices = flashinfer::GetPtrFromBaseOffset<int32_t>(int_ws, plan.kv_tile_indices_offset);
  params.o_indptr = flashinfer::GetPtrFromBaseOffset<int32_t>(int_ws, plan.o_indptr_offset);
  params.kv_chunk_size_ptr = flashinfer::GetPtrFromBaseOffset<int32_t>(int_ws, plan.kv_chunk_size_ptr_offset);
  params.padded_batch_size = static_cast<uint32_t>(plan.padded_batch_size);
  params.max_total_num_rows = static_cast<uint32_t>(plan.total_num_rows);
  params.total_num_rows = nullptr;     // set only by CUDA-graph plans
  params.block_valid_mask = nullptr;
  T* tmp_v = nullptr;
  float* tmp_s = nullptr;
  if (plan.split_kv) {
    params.merge_indptr = flashinfer::GetPtrFromBaseOffset<int32_t>(int_ws, plan.merge_indptr_offset);
    tmp_v = flashinfer::GetPtrFromBaseOffset<T>(float_ws, plan.v_offset);
    tmp_s = flashinfer::GetPtrFromBaseOffset<float>(float_ws, plan.s_offset);
  }
  return std::make_unique<Prepared>(params, tmp_v, tmp_s, in.stream);
}

}  // namespace abfi

// prepare_fa3: FlashInfer's FA3 (Hopper, sm_90a) batch prefill over paged K/V
// (hopper/prefill_sm90.cuh's BatchPrefillWithPagedKVCacheDispatched, its sparse mainloop gathering K/V pages with
// cp.async) with FlashInfer's own parameter struct (hopper/default_params.cuh's BatchPrefillPagedParams) filled as
// its binding (csrc/batch_prefill_sm90.cu, BatchPrefillWithPagedKVCacheSM90Run) fills its own for an HND cache:
// the plan's work list, K and V with the same strides, FlashInfer's default variant (DefaultAttention without
// logits soft cap), its left sliding window in the window instances (kWindow: LEFT_SLIDING_WINDOW and
// window_left, bottom-right aligned as attnbench's), no LSE output, no multi-item scoring, no PDL.
#pragma once
#include <flashinfer/attention/hopper/default_params.cuh>
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include <flashinfer/attention/hopper/variants.cuh>
#include <flashinfer/attention/mask.cuh>
#include <flashinfer/cutlass_utils.cuh>

#include "common/element_type.cuh"
#include "fa3/fa3_instance.hpp"

namespace abfi {

namespace fa3_detail {

using Variant = flashinfer::DefaultAttention</*use_logits_soft_cap=*/false>;

template <int kDType, int kHeadDim, bool kCausal, bool kSameScheduleForAllHeads, bool kWindow>
class PreparedFa3 final : public PreparedForward {
 public:
  using T = flashinfer::cutlass_dtype_t<typename ElementType<kDType>::type>;  // cutlass::half_t / bfloat16_t
  using Params = flashinfer::BatchPrefillPagedParams<T, T, T, int32_t>;

  PreparedFa3(const Params& params, cudaStream_t stream) : params_(params), stream_(stream) {}

  // FlashInfer builds the kernel's arguments (Q's TMA descriptor among them) from params_ and launches one
  // kernel, as its own run does on every call.
  cudaError_t launch() override {
    constexpr auto mask = kCausal ? flashinfer::MaskMode::kCausal : flashinfer::MaskMode::kNone;
    return flashinfer::BatchPrefillWithPagedKVCacheDispatched<kHeadDim, kHeadDim, mask,
                                                              /*LEFT_SLIDING_WINDOW=*/kWindow,
                                                              kSameScheduleForAllHeads, Variant, Params>(
        params_, /*enable_pdl=*/false, stream_);
  }

 private:
  Params params_;
  cudaStream_t stream_;
};

}  // namespace fa3_detail

template <int kDType, int kHeadDim, bool kCausal, bool kSameScheduleForAllHeads, bool kWindow>
std::unique_ptr<PreparedForward> prepare_fa3(const Fa3Inputs& in) {
  using Prepared = fa3_detail::PreparedFa3<kDType, kHeadDim, kCausal, kSameScheduleForAllHeads, kWindow>;
  using T = typename Prepared::T;
  using Params = typename Prepared::Params;
  const PageTable& pages = *in.pages;
  const Fa3Plan& plan = *in.plan;

  Params params{};
  params.q_ptr = static_cast<T*>(const_cast<void*>(in.q));
  params.k_ptr = static_cast<T*>(const_cast<void*>(in.k));
  params.v_ptr = static_cast<T*>(const_cast<void*>(in.v));
  params.o_ptr = static_cast<T*>(in.o);
  params.lse_ptr = nullptr;
  // Token-major Q and O: a token's heads together, then the next token.
  params.q_stride_n = static_cast<int64_t>(in.num_qo_heads) * kHeadDim;
  params.q_stride_h = kHeadDim;
  params.o_stride_n = params.q_stride_n;
  params.o_stride_h = params.q_stride_h;
  // K and V: page number, head, token strides (paged_k_cache.stride(0), (1), (2) of an HND cache).
  params.k_page_stride = params.v_page_stride = pages.strides[0];
  params.k_stride_h = params.v_stride_h = pages.strides[1];
  params.k_stride_n = params.v_stride_n = pages.strides[2];
  params.nnz_qo = in.tokens;
  params.num_qo_heads = static_cast<int>(in.num_qo_heads);
  params.num_kv_heads = static_cast<int>(pages.kv_heads);
  params.group_size = params.num_qo_heads / params.num_kv_heads;
  params.page_size = static_cast<int>(pages.page_size);
  params.window_left = kWindow ? in.window_left : -1;
  params.causal = kCausal;
  params.qo_tile_indices = plan.qo_tile_indices;
  params.qo_indptr = plan.qo_indptr;
  params.kv_indptr = plan.kv_indptr;
  params.qo_lens = plan.qo_lens;
  params.kv_lens = plan.kv_lens;
  params.head_indices = plan.head_indices;
  params.work_indptr = plan.work_indptr;
  params.batch_indices = plan.batch_indices;
  params.kv_indices = const_cast<int32_t*>(in.page_indices_d);
  params.additional_params.logits_soft_cap = 0.f;
  params.additional_params.sm_scale = in.sm_scale;
  params.additional_params.maybe_prefix_len_ptr = nullptr;  // multi-item scoring only
  params.additional_params.maybe_token_pos_in_items_ptr = nullptr;
  params.additional_params.token_pos_in_items_len = 0;
  params.additional_params.maybe_max_item_len_ptr = nullptr;
  return std::make_unique<Prepared>(params, in.stream);
}

}  // namespace abfi

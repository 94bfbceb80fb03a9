// Host launcher of the simple fp32 reference attention kernel (the GPU oracle). No CUDA headers.
#pragma once
#include <cstdint>

namespace ab::kernels {

struct ReferenceParams {
  const void* q = nullptr;  // [B,H,q_len,D]
  const void* k = nullptr;  // [B,KVH,S,D] or the pool [slots][KVH][page_size][D]
  const void* v = nullptr;  // the same, Dv (head_dim_v) wide
  const std::int32_t* block_table = nullptr;  // [B, pages], paged only (device memory)
  const std::int32_t* kv_lens = nullptr;      // [B] KV length per sequence (device memory); nullptr: all seq_len
  const std::int32_t* q_lens = nullptr;       // [B] queries per sequence (a mixed batch, device memory); nullptr: all q_len
  float* out = nullptr;                       // [B,H,q_len,Dv] fp32
  std::int64_t batch = 0, heads = 0, kv_heads = 0, seq_len = 0, q_len = 0, head_dim = 0, pages = 1, page_size = 0;
  std::int64_t head_dim_v = 0;                // V's and O's width; 0: head_dim
  bool paged = false, causal = false, bf16 = false;  // inputs bf16, else fp16
  float scale = 1.0f;
  std::int64_t window = 0;  // a query sees no key before its position (i + len - q_len) minus window; 0: none
  float softcap = 0.0f;     // scaled scores s become softcap * tanh(s / softcap); 0: none
  const float* sinks = nullptr;  // [H] sink logits (device memory): a row's denominator gains exp(sink - max); null: none
};

// Largest head_dim (and head_dim_v) the reference kernel takes: MLA's 576 and some room.
constexpr std::int64_t kReferenceMaxHeadDim = 640;

// One launch on `stream` (cudaStream_t); returns the cudaError_t of the launch.
int launch_reference_attention(const ReferenceParams& p, void* stream);

}  // namespace ab::kernels

// The refusals every FlashInfer peer shares: the CUDA backend only, its one configuration, fp16/bf16, heads a
// multiple of kv_heads, and Q/O small enough for FlashInfer's 32-bit query/output offsets.
#pragma once
#include <attnbench/plugin.h>

#include <cstdint>
#include <limits>

namespace abfi {

// Why a FlashInfer peer with num_configs configurations cannot run `p`, or nullptr.
inline const char* shared_refusal(const ab_problem& p, int32_t backend, int32_t config, int32_t num_configs) {
  if (backend != AB_BACKEND_CUDA) return "FlashInfer's kernels need the CUDA backend";
  if (config < 0 || config >= num_configs) return "unknown configuration";
  if (p.dtype != AB_DTYPE_FP16 && p.dtype != AB_DTYPE_BF16) return "FlashInfer peers run fp16 and bf16 only";
  if (p.kv_heads < 1 || p.heads % p.kv_heads != 0) return "heads must be a multiple of kv_heads";
  // FlashInfer's kernels compute a request's first query/output row as a 32-bit (index * stride) product.
  if (p.batch * p.heads * p.q_len * p.head_dim > std::numeric_limits<uint32_t>::max())
    return "Q/O hold 2^32 elements or more, past FlashInfer's 32-bit query and output offsets";
  return nullptr;
}

}  // namespace abfi

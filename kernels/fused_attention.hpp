// Host API of the fused (FlashAttention-2 style) attention forward kernels. No CUDA headers: the stream
// is passed as void* and the launch result as the cudaError_t value (0 is success).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/attention_kernels.hpp"

namespace ab::kernels {

struct FusedParams {
  const void* q = nullptr;  // [B,H,q_len,D]
  const void* k = nullptr;  // [B,KVH,S,D] or pool [slots][KVH][page_size][D]
  const void* v = nullptr;
  void* o = nullptr;        // [B,H,q_len,D]
  const std::int32_t* block_table = nullptr;  // [B, pages], paged only
  const std::int32_t* kv_lens = nullptr;      // [B] KV length per sequence
  std::int64_t batch = 0, heads = 0, seq_len = 0, head_dim = 0, pages = 1, page_size = 0;
  std::int64_t kv_heads = 0, q_len = 0;       // KV heads (divides heads); queries per sequence
  std::int64_t pool_slots = 0;                // paged: slots of the pool (Problem::pool_slots)
  bool ragged = false;                        // sequences of different lengths (kv_lens differ)
  // A mixed batch (Problem::q_lens): [B] queries per sequence, device memory; rows past a sequence's count are
  // padding (not compared). The decode tiles take it; the prefill tiles refuse it (fused_can_implement).
  const std::int32_t* q_lens = nullptr;
  bool mixed = false;
  bool paged = false;
  bool causal = false;
  bool bf16 = false;  // else fp16
  float scale = 1.0f; // 1/sqrt(head_dim)
  // The variants the decode and persistent (...wsp) tiles apply (the other prefill tiles refuse them:
  // fused_can_implement, from window, softcap and has_sinks).
  std::int64_t window = 0;            // sliding window (Problem::window); 0: none
  float softcap = 0;                  // soft-cap of the scaled scores (Problem::softcap); 0: none
  const float* sinks = nullptr;       // [H] sink logits (Problem::sinks), device memory; null: none
  bool has_sinks = false;             // Problem::sinks: the instance with the variants' code (a launch needs `sinks`)
  void* workspace = nullptr;        // decode tiles: the split partials (fused_decode::partial_bytes); persistent
                                    // tiles: the tail split's (core/fused_tail_layout.hpp, counters zeroed) or null
  std::int64_t workspace_bytes = 0;
};

// The parameters for `p` on the tensors of `io` (scale 1/sqrt(D); contiguous K/V: one page of S).
FusedParams fused_params(const Problem& p, const AttentionIO& io);
// Every compiled tile configuration, best default first: the decode tiles with the heuristic's split count
// (they take only q_len <= 16; the TMA ones first, "decode-ws-n128-rows" at head_dim 128 then "decode-ws":
// Hopper and page sizes 8, 16, 32, 64k), the prefill tiles (the persistent "m128n128w12s2wsp" at head_dim 128
// and "m192n128w16s4wsp" at 64 first), then decode tiles of fixed split counts, both kernels (for tune).
std::vector<FusedTile> fused_compiled_tiles();
// Empty when `tile` is compiled and can run `p` (head_dim instantiated, page size accepted, ...), else why not.
std::string fused_can_implement(const FusedParams& p, const FusedTile& tile);
// One launch on `stream` (cudaStream_t). Returns the cudaError_t of the launch (cudaGetLastError after it).
int fused_launch(const FusedParams& p, const FusedTile& tile, void* stream);
// Kernels one fused_launch of `tile` on `p` starts (2 for a decode tile with more than one split).
int fused_kernel_count(const FusedParams& p, const FusedTile& tile);
// Resident CTAs per SM of the compiled instance a decode `tile` runs on `p`, from the runtime (what the split
// model assumes); 0 for a prefill tile, one that cannot run `p`, or where the runtime cannot say.
int fused_decode_occupancy(const FusedParams& p, const FusedTile& tile);

}  // namespace ab::kernels

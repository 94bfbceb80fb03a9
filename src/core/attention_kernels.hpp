// The attention-kernel interface of a backend: the softmax/combine/finalize/gather primitives the
// GEMM-based strategies launch between GEMMs, and the fused kernel and its tiles. (The delay kernel is the
// profiler's, core/profiler.hpp; the fault-injection test hook is core/fault_injection.hpp.)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "core/fused_tile.hpp"
#include "core/key_mask.hpp"
#include "core/problem.hpp"
#include "core/softmax_sinks.hpp"

namespace ab {

// ---- kernel primitives ------------------------------------------------------------------------------
// Score matrices are already scaled (1/sqrt(D) is the QK^T GEMM's alpha). An item (`bh`) is a query head
// of a sequence, or with GQA packing the group of heads sharing a KV head; a column c of a page starting at
// token `col_offset` is key col_offset + c; `mask` (core/key_mask.hpp) says which keys each row sees.

// Online-softmax update over one page for `bh_count` heads at once (nested: 1 head, head_batched: all).
// Per row: m' = max(m, max_c s); P_c = exp(s_c - m'); l' = l e^(m-m') + sum P; acc *= e^(m-m').
// With first_page, m and l are initialised and acc is not read (the PV GEMM then runs with beta = 0).
struct SoftmaxUpdateArgs {
  const void* scores = nullptr;
  DType score_type = DType::fp32;
  std::int64_t score_ld = 0, score_bh_stride = 0;
  void* probs = nullptr;  // same dtype as V
  DType prob_type = DType::fp16;
  std::int64_t prob_ld = 0, prob_bh_stride = 0;
  float* row_max = nullptr;  // [bh_count * rows]
  float* row_sum = nullptr;
  float* acc = nullptr;  // [bh_count, rows, head_dim]
  std::int64_t bh_count = 0, rows = 0, cols = 0, head_dim = 0;
  std::int64_t col_offset = 0;
  bool first_page = false;
  KeyMask mask;
};

// Page-local softmax over every page at once (fully_batched, ptr_array). Scores of (bh, page p, row r,
// col c) are at bh*score_bh_stride + p*score_page_stride + r*score_ld + c. Probabilities go to a
// page-major buffer [bh, pages, rows, page_size] with the short last page's missing columns set to 0;
// page_max/page_sum are [bh, pages, rows]. A row with every key of a page masked gets max -inf, sum 0.
struct PageSoftmaxArgs {
  const void* scores = nullptr;
  DType score_type = DType::fp32;
  std::int64_t score_bh_stride = 0, score_page_stride = 0, score_ld = 0;
  void* probs = nullptr;
  DType prob_type = DType::fp16;
  float* page_max = nullptr;
  float* page_sum = nullptr;
  std::int64_t bh_count = 0, pages = 0, rows = 0, page_size = 0, last_page_len = 0;
  KeyMask mask;  // a page whose keys are all past a sequence's length gets max -inf, sum 0
};

// Combine per-page partial outputs [bh, pages, rows, head_dim] (fp32, unnormalised) into O [bh, rows, D]
// (head_dim here and in the update and finalize below: O's width, the problem's head_dim_v).
struct CombineArgs {
  const float* partial = nullptr;
  const float* page_max = nullptr;
  const float* page_sum = nullptr;
  std::int64_t bh_count = 0, pages = 0, rows = 0, head_dim = 0;
  void* out = nullptr;
  DType out_type = DType::fp16;
  SoftmaxSinks sinks;  // with logits: each row's denominator gains exp(sink - m), m the max over its pages
};

// O = acc / l for every row (with sinks, acc / (l + exp(sink - row_max))).
struct FinalizeArgs {
  const float* acc = nullptr;
  const float* row_sum = nullptr;
  const float* row_max = nullptr;  // read only with sinks
  std::int64_t bh_count = 0, rows = 0, head_dim = 0;
  void* out = nullptr;
  DType out_type = DType::fp16;
  SoftmaxSinks sinks;
};

// Copy K and V pages into contiguous padded tensors [B*KVH*group, pages*page_size, D] (V: Dv = head_dim_v
// wide), rows past a sequence's length zeroed (kv_lens[b], or seq_len for all); destination head j reads KV head j / group
// (group > 1 broadcasts K/V to every query head). The source is either contiguous [B,KVH,S,D] (padding a
// short last page) or the paged pool, whose block-table entries past a sequence's last page are never read.
struct GatherArgs {
  const void* k_src = nullptr;
  const void* v_src = nullptr;
  const std::int32_t* block_table = nullptr;  // [B, pages], paged source only
  const std::int32_t* kv_lens = nullptr;      // [B] in backend memory; nullptr: every sequence has seq_len
  bool paged = false;
  void* k_dst = nullptr;
  void* v_dst = nullptr;
  std::int64_t batch = 0, kv_heads = 0, seq_len = 0, pages = 0, page_size = 0, head_dim = 0;
  std::int64_t head_dim_v = 0;  // V's row width; 0: head_dim
  std::int64_t group = 1;
  DType dtype = DType::fp16;
};

// ---- the problem's tensors, and the fused kernel's tiles --------------------------------------------

// Q is [B,H,q_len,D] and O [B,H,q_len,Dv]. K is [B,KVH,S,D] and V [B,KVH,S,Dv] (contiguous; rows past a
// ragged sequence's length hold values that must be masked) or pools of pool_slots() slots, each
// [KVH, page_size, D] (V's: Dv), reached
// through block_table [B, pages] (paged; -1 past a sequence's last page). In the pool, rows of a
// sequence's short last page past its length hold zeros. Query head h reads KV head h / group().
class GuardRegions;  // core/guarded_buffer.hpp

struct AttentionIO {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  const std::int32_t* block_table = nullptr;       // backend memory
  const std::int32_t* block_table_host = nullptr;  // the same table on the host, for pointer arithmetic
  const std::int32_t* kv_lens = nullptr;           // [B] KV length per sequence, backend memory (always set)
  const std::int32_t* kv_lens_host = nullptr;      // the same on the host
  const std::int32_t* q_lens = nullptr;            // [B] queries per sequence, backend memory (always set)
  const std::int32_t* q_lens_host = nullptr;       // the same on the host
  const float* sinks = nullptr;                    // [H] sink logits (Problem::sinks), backend memory; else null
  const float* sinks_host = nullptr;               // the same on the host
  // The guard regions around every buffer above (ProblemInputs), checked after a plugin's forwards; may be null.
  const GuardRegions* guards = nullptr;
};

// Contiguous K and V allocations carry this many zeroed rows of slack past their end, so that a GEMM over
// a full-size last page (ptr_array) reads defined memory.
inline std::int64_t kv_slack_rows(const Problem& p) { return p.page_size; }

// The fused kernel's tiles: core/fused_tile.hpp.

class AttentionKernels {
 public:
  virtual ~AttentionKernels() = default;
  virtual void softmax_update(const SoftmaxUpdateArgs& a) = 0;
  virtual void page_softmax(const PageSoftmaxArgs& a) = 0;
  virtual void combine_pages(const CombineArgs& a) = 0;
  virtual void finalize(const FinalizeArgs& a) = 0;
  virtual void gather_pages(const GatherArgs& a) = 0;
  // The problem variants (Problem::variants) these primitives and fused kernel apply (KeyMask's window and
  // soft-cap): a strategy runs a variant only on a backend whose kernels do (Strategy::can_run).
  virtual std::vector<std::string> runs_variants() const { return {}; }

  // Fused attention: the compiled tiles, which of them take a problem, and one launch.
  virtual std::vector<FusedTile> fused_tiles() const = 0;
  // Empty string when `tile` can run `p`, else the reason it cannot.
  virtual std::string fused_can_implement(const Problem& p, const FusedTile& tile) const = 0;
  // Resident CTAs per SM of the kernel a decode `tile` runs on `p` (the device's occupancy of it: the split
  // model's slots); 0 where not known (then fused_decode::ctas_per_sm's design value).
  virtual int fused_decode_ctas_per_sm(const Problem&, const FusedTile&) const { return 0; }
  // `workspace`: device memory of fused_decode::workspace_bound bytes for a decode tile (its split
  // partials); for a persistent tile the tail split's partials (core/fused_tail_layout.hpp, counters zeroed),
  // `workspace_bytes` of it, or nullptr (no split); else unused (may be nullptr).
  virtual void fused_attention(const Problem& p, const AttentionIO& io, const FusedTile& tile, void* workspace,
                               std::int64_t workspace_bytes) = 0;
};

}  // namespace ab

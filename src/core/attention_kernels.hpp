// The attention-kernel interface of a backend: the softmax/combine/finalize/gather primitives the
// GEMM-based strategies launch between GEMMs, the fused kernel and its tiles, and the fault and delay
// test hooks (which launch kernels of their own).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "core/problem.hpp"

namespace ab {

// ---- kernel primitives ------------------------------------------------------------------------------
// Score matrices are already scaled (1/sqrt(D) is the QK^T GEMM's alpha). Row r of head bh is query r;
// a column c of a page starting at token `col_offset` is key col_offset + c; causal masks key > query.

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
  bool causal = false;
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
  bool causal = false;
};

// Combine per-page partial outputs [bh, pages, rows, head_dim] (fp32, unnormalised) into O [bh, rows, D].
struct CombineArgs {
  const float* partial = nullptr;
  const float* page_max = nullptr;
  const float* page_sum = nullptr;
  std::int64_t bh_count = 0, pages = 0, rows = 0, head_dim = 0;
  void* out = nullptr;
  DType out_type = DType::fp16;
};

// O = acc / l for every row.
struct FinalizeArgs {
  const float* acc = nullptr;
  const float* row_sum = nullptr;
  std::int64_t bh_count = 0, rows = 0, head_dim = 0;
  void* out = nullptr;
  DType out_type = DType::fp16;
};

// Copy K and V pages into contiguous padded tensors [bh, pages*page_size, D], rows past seq_len zeroed.
// The source is either contiguous [B,H,S,D] (padding a short last page) or the paged pool.
struct GatherArgs {
  const void* k_src = nullptr;
  const void* v_src = nullptr;
  const std::int32_t* block_table = nullptr;  // [B, pages], paged source only
  bool paged = false;
  void* k_dst = nullptr;
  void* v_dst = nullptr;
  std::int64_t batch = 0, heads = 0, seq_len = 0, pages = 0, page_size = 0, head_dim = 0;
  DType dtype = DType::fp16;
};

// ---- the problem's tensors, and the fused kernel's tiles --------------------------------------------

// Q and O are [B,H,S,D]. K and V are [B,H,S,D] (contiguous) or a pool of B*pages slots, each
// [H, page_size, D], reached through block_table [B, pages] (paged). In the pool, rows of a short last
// page past seq_len hold zeros.
struct AttentionIO {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  const std::int32_t* block_table = nullptr;       // backend memory
  const std::int32_t* block_table_host = nullptr;  // the same table on the host, for pointer arithmetic
};

// Contiguous K and V allocations carry this many zeroed rows of slack past their end, so that a GEMM over
// a full-size last page (ptr_array) reads defined memory.
inline std::int64_t kv_slack_rows(const Problem& p) { return p.page_size; }

struct FusedTile {
  int block_m = 64, block_n = 64, warps = 4, stages = 2;
  std::string name() const;  // "m64n64w4s2"
  nlohmann::json to_json() const;
  bool operator==(const FusedTile& o) const {
    return block_m == o.block_m && block_n == o.block_n && warps == o.warps && stages == o.stages;
  }
};

class AttentionKernels {
 public:
  virtual ~AttentionKernels() = default;
  virtual void softmax_update(const SoftmaxUpdateArgs& a) = 0;
  virtual void page_softmax(const PageSoftmaxArgs& a) = 0;
  virtual void combine_pages(const CombineArgs& a) = 0;
  virtual void finalize(const FinalizeArgs& a) = 0;
  virtual void gather_pages(const GatherArgs& a) = 0;

  // Fused attention: the compiled tiles, which of them take a problem, and one launch.
  virtual std::vector<FusedTile> fused_tiles() const = 0;
  // Empty string when `tile` can run `p`, else the reason it cannot.
  virtual std::string fused_can_implement(const Problem& p, const FusedTile& tile) const = 0;
  virtual void fused_attention(const Problem& p, const AttentionIO& io, const FusedTile& tile) = 0;

  // Test hook (ATTNBENCH_INJECT_FAULT): make the device fail the way a kernel bug would, with a sticky
  // error. cuda: a kernel writes to an invalid address; cpu: simulated, and Backend::recover() then fails.
  // Throws BackendError.
  virtual void inject_fault();

  // Test hook (ATTNBENCH_INJECT_SLOWDOWN): enqueue `ms` of device time that computes nothing, in stream
  // order after whatever was enqueued before (cuda: one kernel spinning on the global timer; cpu: a busy
  // wait). The CI gate's power is measured by slowing strategies this way. Throws BackendError.
  virtual void inject_delay(double ms);
};

}  // namespace ab

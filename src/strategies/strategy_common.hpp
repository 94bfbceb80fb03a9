// Pieces shared by the GEMM-based strategies: score precision, page pointers in either KV layout, the
// gather decision and a workspace that frees itself.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "core/backend.hpp"
#include "core/sizes.hpp"
#include "core/strategy.hpp"

namespace ab {

// The configuration a GEMM strategy reports: the score precision and whether K/V pages were gathered.
inline StrategyConfig gemm_strategy_config(DType scores, bool gathered_pages) {
  StrategyConfig c;
  c.score_dtype = scores;
  c.gathered_pages = gathered_pages;
  return c;
}

inline DType score_type(const Problem& p, const StrategyOptions& opt) {
  return opt.fp32_scores ? DType::fp32 : p.dtype;
}

// Start of page `page` of KV head (b, kvh) in K or V (`base` is io.k or io.v), in either layout.
const void* kv_page_ptr(const Problem& p, const AttentionIO& io, const void* base, std::int64_t b,
                        std::int64_t kvh, std::int64_t page);

// Workspace buffers owned by a strategy between setup and teardown.
class Workspace {
 public:
  void* add(Backend& b, std::int64_t bytes) {
    bufs_.emplace_back(b.memory(), static_cast<std::size_t>(bytes));
    return bufs_.back().get();
  }
  void clear() { bufs_.clear(); }

 private:
  std::vector<Buffer> bufs_;
};

// GEMM plans for a full page and, when its length differs, the short last page (else the full page's).
struct PagePlans {
  GemmPlan plan[2];
  const GemmPlan& use(int last) const { return plan[last].valid() ? plan[last] : plan[0]; }
  void reset() {
    plan[1].reset();
    plan[0].reset();
  }
};

// K/V gathered (or padded) into contiguous [B*KVH, pages*page_size, D]: two tensors.
inline std::int64_t gathered_kv_bytes(const Problem& p) {
  return size_mul(2, p.b_kvh(), p.padded_seq(), p.head_dim, dtype_size(p.dtype));
}

// Until a strategy runs the inference shapes: why it cannot ("" for self-attention on an even batch).
inline std::string inference_shape_gap(const Problem& p) {
  if (p.kv_heads != p.heads) return "grouped KV heads are not yet implemented by this strategy";
  if (p.q_len != p.seq_len) return "q_len different from the KV length is not yet implemented by this strategy";
  if (p.ragged()) return "ragged KV lengths are not yet implemented by this strategy";
  return "";
}

GatherArgs make_gather_args(const Problem& p, const AttentionIO& io, void* k_dst, void* v_dst);

}  // namespace ab

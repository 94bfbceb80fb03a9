// Pieces shared by the GEMM-based strategies: score precision, page pointers in either KV layout, the
// gather decision and a workspace that frees itself.
#pragma once
#include <cstdint>
#include <optional>
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

// Start of page `page` of KV head (b, kvh) in K (k_page_ptr, rows head_dim wide) or V (v_page_ptr, head_dim_v), in
// either layout.
const void* k_page_ptr(const Problem& p, const AttentionIO& io, std::int64_t b, std::int64_t kvh, std::int64_t page);
const void* v_page_ptr(const Problem& p, const AttentionIO& io, std::int64_t b, std::int64_t kvh, std::int64_t page);

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

// How a GEMM strategy lays queries over GEMM items. Packed (grouped KV heads with gqa_packing): an item is a
// sequence's KV head, its rows the group's query heads one after another (g·q_len rows; with Q [B,H,q,D]
// they are already contiguous). Otherwise an item is one query head of q_len rows, reading KV head h / g.
// Either way item i's queries start at row i·rows of Q and O, so O needs no reordering.
struct QueryRows {
  bool packed = false;
  std::int64_t items = 0;          // B·KVH packed, else B·H
  std::int64_t rows = 0;           // g·q_len packed, else q_len
  std::int64_t items_per_seq = 0;  // KVH packed, else H
  std::int64_t group = 1;          // query heads an item's KV head serves when not packed (1 when packed)
  // The KV item (sequence, KV head) that item i reads: b·KVH + kvh.
  std::int64_t kv_item(std::int64_t i) const { return packed ? i : i / group; }
};
QueryRows query_rows(const Problem& p, const StrategyOptions& opt);
// The (item, page) GEMM products of one forward over the real lengths: each item over its sequence's pages.
std::int64_t page_products(const Problem& p, const QueryRows& qr);

// The mask of `rows` over `items` (ragged lengths from io.kv_lens, else seq_len for every sequence).
KeyMask key_mask(const Problem& p, const AttentionIO& io, const QueryRows& qr);
// The sinks of `rows` over `items` (io.sinks; no logits when the problem has none).
SoftmaxSinks softmax_sinks(const Problem& p, const AttentionIO& io, const QueryRows& qr);

// The configuration a GEMM strategy reports: score precision, gathered pages, packing, padded fraction.
inline StrategyConfig gemm_strategy_config(DType scores, bool gathered_pages, const QueryRows& qr,
                                           std::optional<double> padded_fraction = std::nullopt) {
  StrategyConfig c = gemm_strategy_config(scores, gathered_pages);
  c.gqa_packed = qr.packed;
  c.padded_fraction = padded_fraction;
  return c;
}

// K/V gathered (or padded, or broadcast to every query head) into contiguous [B·heads, pages·page_size, D]
// (V: head_dim_v): one tensor's bytes, rows `width` wide, and both. `heads` is KVH, or H when broadcast.
inline std::int64_t gathered_bytes(const Problem& p, std::int64_t heads, std::int64_t width) {
  return size_mul(p.batch, heads, p.padded_seq(), width, dtype_size(p.dtype));
}
inline std::int64_t gathered_kv_bytes(const Problem& p, std::int64_t heads) {
  return size_add(gathered_bytes(p, heads, p.head_dim), gathered_bytes(p, heads, p.head_dim_v));
}

// A gather into [B·KVH·group, pages·page_size, D] (group > 1: K/V broadcast to every query head).
GatherArgs make_gather_args(const Problem& p, const AttentionIO& io, void* k_dst, void* v_dst, std::int64_t group);

}  // namespace ab

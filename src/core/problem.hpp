// One attention problem (B, H, S, D, pages, layout, dtype, causal) and the quantities derived from it:
// page geometry, FLOPs and bytes as FlashAttention's benchmarks count them, tensor sizes.
#pragma once
#include <cstdint>
#include <string>

#include "core/dtype.hpp"

namespace ab {

enum class KvLayout { contiguous, paged };
const char* kv_layout_name(KvLayout l);
bool parse_kv_layout(const std::string& s, KvLayout* out);

struct Problem {
  std::int64_t batch = 1;
  std::int64_t heads = 1;
  std::int64_t seq_len = 1;
  std::int64_t head_dim = 64;
  std::int64_t pages = 1;      // effective page count: ceil(seq_len / page_size)
  std::int64_t page_size = 1;  // tokens per page; the last page may be shorter
  KvLayout kv_layout = KvLayout::contiguous;
  DType dtype = DType::fp16;
  bool causal = false;
  std::int64_t pages_requested = 0;  // what the user asked for (0: given as page_size); not part of ==

  std::int64_t bh() const { return batch * heads; }
  std::int64_t page_start(std::int64_t p) const { return p * page_size; }
  std::int64_t page_len(std::int64_t p) const;
  std::int64_t last_page_len() const { return page_len(pages - 1); }
  std::int64_t padded_seq() const { return pages * page_size; }
  float scale() const;

  // 4·B·H·S·S·D, halved when causal (FlashAttention's convention).
  double flops() const;
  // Q, K, V read once and O written once.
  double bytes() const;
  // Elements of one [B,H,S,D] tensor.
  std::int64_t qkv_elements() const { return batch * heads * seq_len * head_dim; }
  // Slots in the paged pool (B·P pages, each [H, page_size, D]).
  std::int64_t pool_slots() const { return batch * pages; }
  // Elements of the paged K (or V) pool: pool_slots() slots of [H, page_size, D].
  std::int64_t pool_elements() const { return pool_slots() * heads * page_size * head_dim; }

  std::string label() const;  // "B=32 H=12 S=512 D=64 P=1 contiguous fp16"
  bool operator==(const Problem& o) const;
};

// The largest [B,H,S,D] tensor make_problem accepts (2^50 elements: 8 PiB in fp64), so that every size
// derived from a problem fits in 64 bits.
inline constexpr std::int64_t kMaxTensorElements = std::int64_t(1) << 50;

// Builds a problem from user sizes. Exactly one of pages / page_size is > 0. Throws UsageError on
// zero or negative sizes, more pages than tokens, a page size larger than seq_len, or a tensor of more
// than kMaxTensorElements elements.
Problem make_problem(std::int64_t batch, std::int64_t heads, std::int64_t seq_len, std::int64_t head_dim,
                     std::int64_t pages, std::int64_t page_size, KvLayout layout, DType dtype, bool causal);

}  // namespace ab

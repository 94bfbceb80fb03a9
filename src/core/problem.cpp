// Problem construction, validation and derived quantities.
#include "core/problem.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/problem_axes.hpp"
#include "core/sizes.hpp"

namespace ab {

const char* kv_layout_name(KvLayout l) { return l == KvLayout::paged ? "paged" : "contiguous"; }

bool parse_kv_layout(const std::string& s, KvLayout* out) {
  if (s == "contiguous") { *out = KvLayout::contiguous; return true; }
  if (s == "paged") { *out = KvLayout::paged; return true; }
  return false;
}

std::int64_t Problem::page_len(std::int64_t p) const {
  std::int64_t start = p * page_size;
  std::int64_t end = start + page_size < seq_len ? start + page_size : seq_len;
  return end > start ? end - start : 0;
}

float Problem::scale() const { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim))); }

double Problem::flops() const {
  double f = 4.0 * batch * heads * static_cast<double>(seq_len) * seq_len * head_dim;
  return causal ? f / 2 : f;
}

double Problem::bytes() const { return 4.0 * static_cast<double>(qkv_elements()) * dtype_size(dtype); }

std::string Problem::label() const { return problem_label(*this); }  // from the axis table

bool Problem::operator==(const Problem& o) const {
  return batch == o.batch && heads == o.heads && seq_len == o.seq_len && head_dim == o.head_dim &&
         pages == o.pages && page_size == o.page_size && kv_layout == o.kv_layout && dtype == o.dtype &&
         causal == o.causal;
}

Problem make_problem(std::int64_t batch, std::int64_t heads, std::int64_t seq_len, std::int64_t head_dim,
                     std::int64_t pages, std::int64_t page_size, KvLayout layout, DType dtype, bool causal) {
  auto positive = [](const char* name, std::int64_t v) {
    if (v <= 0) throw UsageError(fmt::format("{} must be a positive integer, got {}", name, v));
  };
  positive("batch", batch);
  positive("heads", heads);
  positive("seq_len", seq_len);
  positive("head_dim", head_dim);
  if ((pages > 0) == (page_size > 0))
    throw UsageError("give exactly one of --pages and --page_size");
  Problem p;
  p.batch = batch;
  p.heads = heads;
  p.seq_len = seq_len;
  p.head_dim = head_dim;
  p.kv_layout = layout;
  p.dtype = dtype;
  p.causal = causal;
  if (pages > 0) {
    if (pages > seq_len)
      throw UsageError(fmt::format("pages={} is more than seq_len={} tokens", pages, seq_len));
    p.page_size = (seq_len + pages - 1) / pages;
  } else {
    if (page_size > seq_len)
      throw UsageError(fmt::format("page_size={} is larger than seq_len={}", page_size, seq_len));
    p.page_size = page_size;
  }
  // With page_size = ceil(S/P) some requested counts leave trailing pages empty (S=10, P=6 gives 5
  // pages of 2); the effective count is the number of non-empty pages.
  p.pages = (seq_len + p.page_size - 1) / p.page_size;
  p.pages_requested = pages > 0 ? pages : 0;
  // Every count derived from a problem (elements, fp64 bytes, pool slots, launches) must fit in 64 bits;
  // the refusal prints the true size, computed in floating point.
  if (size_mul(batch, heads, seq_len, head_dim) > kMaxTensorElements) {
    double elements = static_cast<double>(batch) * heads * seq_len * head_dim;
    throw UsageError(fmt::format("problem {}: one [B,H,S,D] tensor has {:.4g} elements ({} in {}), more than the "
                                 "2^50 this tool can address; refused",
                                 p.label(), elements, human_bytes(elements * dtype_size(dtype)), dtype_name(dtype)));
  }
  return p;
}

}  // namespace ab

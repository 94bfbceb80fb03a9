// Problem → cache key text and JSON.
#include "tune/problem_key.hpp"

#include <fmt/format.h>

namespace ab {

std::string problem_cache_key(const Problem& p) {
  return fmt::format("B{}_H{}_S{}_D{}_P{}_ps{}_{}_{}_{}", p.batch, p.heads, p.seq_len, p.head_dim, p.pages,
                     p.page_size, kv_layout_name(p.kv_layout), dtype_name(p.dtype), p.causal ? "causal" : "full");
}

nlohmann::json problem_cache_json(const Problem& p) {
  return {{"batch", p.batch},         {"heads", p.heads},
          {"seq_len", p.seq_len},     {"head_dim", p.head_dim},
          {"pages", p.pages},         {"page_size", p.page_size},
          {"kv_layout", kv_layout_name(p.kv_layout)}, {"dtype", dtype_name(p.dtype)},
          {"causal", p.causal}};
}

}  // namespace ab

// The problem grid from the size flags that `run` and `tune` share (or from --config), for any flags
// struct with the fields batch, heads, seq_len, head_dim, pages, page_size, kv_layout, dtype, causal, config.
#pragma once
#include <vector>

#include "core/errors.hpp"
#include "core/grid.hpp"

namespace ab {

template <class Flags>
std::vector<Problem> problems_from_flags(const Flags& f) {
  if (!f.config.empty()) return load_suite(f.config);
  if (!f.pages.empty() && !f.page_size.empty()) throw UsageError("give --pages or --page_size, not both");
  GridSpec g;
  g.batch = f.batch;
  g.heads = f.heads;
  g.seq_len = f.seq_len;
  g.head_dim = f.head_dim;
  g.pages = f.pages.empty() ? "1" : f.pages;
  g.page_size = f.page_size;
  g.kv_layout = f.kv_layout;
  g.dtype = f.dtype;
  g.causal = f.causal ? "true" : "false";
  return expand_grid(g);
}

}  // namespace ab

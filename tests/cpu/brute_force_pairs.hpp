// The (query, key) pairs and the K/V rows some query sees, counted one real query at a time from the rule itself,
// for the counting tests (test_variants, test_mixed_batch): query i < q_len_of(b) of sequence b of KV length L, at
// position i + L - q_len_of(b), sees key j when j >= position - window (a window), j <= position (causal), j < L.
#pragma once
#include <cstdint>
#include <vector>

#include "core/problem.hpp"

namespace ab::counting {

struct Counted {
  double pairs = 0, kv_rows = 0;
};

inline Counted brute_force(const Problem& p) {
  Counted c;
  for (std::int64_t b = 0; b < p.batch; ++b) {
    const std::int64_t L = p.kv_len(b), q = p.q_len_of(b);
    std::vector<bool> seen(static_cast<std::size_t>(L), false);
    for (std::int64_t i = 0; i < q; ++i) {
      const std::int64_t pos = i + L - q;
      for (std::int64_t j = 0; j < L; ++j) {
        if ((p.window > 0 && j < pos - p.window) || (p.causal && j > pos)) continue;
        c.pairs += static_cast<double>(p.heads);
        seen[static_cast<std::size_t>(j)] = true;
      }
    }
    for (bool s : seen) c.kv_rows += s;
  }
  return c;
}

}  // namespace ab::counting

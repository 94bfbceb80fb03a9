// Attention sinks (Problem::sinks, gpt-oss): head h has a logit sink_h that joins every softmax of its rows as
// one more term of the denominator, with no value row: a row's output is sum_j exp(s_j - m) v_j / (sum_j
// exp(s_j - m) + exp(sink_h - m)), m the row's running max of its scores (the sink need not be below it: the
// term is then large, not infinite, in fp32 or fp64). The values are drawn from the run's seed
// (make_random_inputs), one fp32 a query head. SoftmaxSinks tells a primitive that normalizes rows (combine,
// finalize) the head of each row in whichever layout the strategy gave its rows (core/key_mask.hpp's items).
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define AB_SINKS_HOST_DEVICE __host__ __device__
#else
#define AB_SINKS_HOST_DEVICE
#endif

namespace ab {

struct SoftmaxSinks {
  const float* logits = nullptr;    // [H] in the memory of whoever reads it; nullptr: no sinks
  std::int64_t items_per_seq = 1;   // items of one sequence: query heads, or KV heads when packed
  std::int64_t heads_per_item = 1;  // query heads one item's rows hold: the group when packed, else 1
  std::int64_t q_len = 1;           // consecutive rows of one query head within an item
  std::int64_t item0 = 0;           // index of the launch's first item among all items (as KeyMask::item0)
};

// The query head of row `row` of item `item` (counted from the launch's first item).
AB_SINKS_HOST_DEVICE inline std::int64_t sink_head(const SoftmaxSinks& s, std::int64_t item, std::int64_t row) {
  return ((s.item0 + item) % s.items_per_seq) * s.heads_per_item + row / s.q_len;
}

}  // namespace ab

// Which keys a row of a score matrix sees, shared by the CPU primitives, the CUDA kernels and the strategies
// that set them up. A launch covers `items` (a query head of a sequence, or with GQA packing the group of
// query heads that share a KV head), each of `rows` rows: row r is query r % q_len of its head, the last
// q_len positions of a sequence whose KV length is kv_lens[b] (or kv_len). Keys past the sequence are
// masked, and with causal (bottom-right aligned, as FlashAttention and FlashInfer) so are keys after the
// query: query i of a sequence of length L sees keys 0 ... i + L - q_len. With a sliding window (window > 0) a
// query sees no key before its position (i + L - q_len) minus window: the visible keys of a row are the range
// [key_first, key_limit). The mask also carries the scores' soft-cap (softcap > 0: every visible score s, already
// scaled, becomes softcap·tanh(s / softcap) before the softmax), which every reader of the mask applies.
#pragma once
#include <cstdint>

#include "core/host_device.hpp"

namespace ab {

struct KeyMask {
  bool causal = false;
  std::int64_t q_len = 0;                 // queries per head; 0: row r is query r (self-attention rows)
  std::int64_t kv_len = 0;                // every sequence's KV length when kv_lens is null; 0: no length mask
  const std::int32_t* kv_lens = nullptr;  // [B] in the memory of whoever reads it (device for kernels)
  // A mixed batch: [B] queries per sequence (the same memory); row r of an item is then query r % q_len of a
  // sequence with q_lens[b] of them (rows past them padding, masked as its last query). nullptr: all q_len.
  const std::int32_t* q_lens = nullptr;
  std::int64_t items_per_seq = 1;         // items of one sequence (heads, or KV heads when packed)
  std::int64_t item0 = 0;                 // index of the launch's first item among all items
  std::int64_t window = 0;                // sliding window (Problem::window); 0: none
  double softcap = 0;                     // soft-cap of the scores (Problem::softcap); 0: none
};

// The first key row `row` of item `item` sees: 0, or with a window its position minus the window.
AB_HOST_DEVICE inline std::int64_t key_first(const KeyMask& m, std::int64_t item, std::int64_t row) {
  if (m.window <= 0) return 0;
  const std::int64_t seq = (m.item0 + item) / m.items_per_seq;
  std::int64_t len = m.kv_len;
  if (m.kv_lens) len = m.kv_lens[seq];
  const std::int64_t q_len = m.q_lens ? m.q_lens[seq] : m.q_len > 0 ? m.q_len : len;
  std::int64_t qi = m.q_len > 0 ? row % m.q_len : row;
  if (m.q_lens && qi >= q_len) qi = q_len - 1;  // padding: the last query's keys
  const std::int64_t first = qi + len - q_len - m.window;
  return first > 0 ? first : 0;
}

// The end of the keys row `row` of item `item` (counted from the launch's first item) sees: keys
// [key_first, key_limit) are visible.
AB_HOST_DEVICE inline std::int64_t key_limit(const KeyMask& m, std::int64_t item, std::int64_t row) {
  const std::int64_t seq = (m.item0 + item) / m.items_per_seq;
  std::int64_t len = m.kv_len;
  if (m.kv_lens) len = m.kv_lens[seq];
  const std::int64_t q_len = m.q_lens ? m.q_lens[seq] : m.q_len > 0 ? m.q_len : (len > 0 ? len : 0);
  std::int64_t qi = m.q_len > 0 ? row % m.q_len : row;
  if (m.q_lens && qi >= q_len) qi = q_len - 1;  // padding: the last query's keys
  if (len <= 0) return m.causal ? qi + 1 : INT64_MAX;  // no length: self-attention's causal rule
  if (!m.causal) return len;
  const std::int64_t lim = qi + len - q_len + 1;
  return lim < len ? lim : len;
}

}  // namespace ab

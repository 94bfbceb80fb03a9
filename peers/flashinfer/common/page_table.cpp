// build_page_table and page_table_limit: attnbench's block table and kv_lens as FlashInfer's page arrays.
#include "common/page_table.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace abfi {

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kUint32Max = std::numeric_limits<uint32_t>::max();

bool paged(const ab_problem& p) { return p.kv_layout == AB_KV_PAGED; }
int64_t page_size_of(const ab_problem& p) { return paged(p) ? p.page_size : kContiguousPageSize; }
int64_t pages_per_sequence(const ab_problem& p) { return (p.seq_len + page_size_of(p) - 1) / page_size_of(p); }
// The page number of sequence b's page i (paged: its slot; contiguous: its first token, KV head 0).
int64_t page_number(const ab_problem& p, int64_t b, int64_t i, int64_t slot) {
  if (paged(p)) return slot;
  return b * p.kv_heads * p.seq_len + i * kContiguousPageSize;
}

}  // namespace

const char* page_table_limit(const ab_problem& p) {
  if (paged(p) && p.kv_heads * p.page_size * p.head_dim > kUint32Max)
    return "one K/V page (kv_heads x page_size x head_dim elements) is past FlashInfer's 32-bit page stride";
  const int64_t largest_page_number = paged(p) ? p.pool_slots : p.batch * p.kv_heads * p.seq_len;
  if (largest_page_number > kInt32Max)
    return paged(p) ? "the K/V pool has more pages than FlashInfer's 32-bit page numbers address"
                    : "contiguous K/V has more tokens than FlashInfer's 32-bit page numbers address (its pages are "
                      "numbered by token here)";
  const int64_t pages = p.batch * pages_per_sequence(p);
  if (pages > kInt32Max) return "the batch has more pages than FlashInfer's 32-bit page indptr counts";
  if (pages * page_size_of(p) > kUint32Max)
    return "the batch's pages hold more tokens than FlashInfer's 32-bit position in the page list reaches";
  return nullptr;
}

PageTable build_page_table(const ab_problem& p, const int32_t* block_table_host, const int32_t* kv_lens_host) {
  if (const char* why = page_table_limit(p)) throw std::runtime_error(why);
  if (!kv_lens_host) throw std::runtime_error("no host kv_lens");
  if (paged(p) && !block_table_host) throw std::runtime_error("no host block table");
  const int64_t page_size = page_size_of(p);
  PageTable t;
  t.requests = static_cast<uint32_t>(p.batch);
  t.page_size = static_cast<uint32_t>(page_size);
  t.kv_heads = static_cast<uint32_t>(p.kv_heads);
  if (paged(p)) {
    t.strides[0] = t.kv_heads * page_size * p.head_dim;
    t.strides[1] = page_size * p.head_dim;
  } else {
    t.strides[0] = p.head_dim;  // page numbers count tokens
    t.strides[1] = p.seq_len * p.head_dim;
  }
  t.strides[2] = p.head_dim;
  t.indptr.reserve(t.requests + 1);
  t.indptr.push_back(0);
  t.last_page_len.reserve(t.requests);
  std::vector<int64_t> slots;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t len = kv_lens_host[b];
    if (len < 1 || len > p.seq_len)
      throw std::runtime_error("sequence " + std::to_string(b) + " has KV length " + std::to_string(len) +
                               " (FlashInfer's pages need 1 .. seq_len)");
    const int64_t pages = (len + page_size - 1) / page_size;
    slots.assign(pages, 0);
    for (int64_t i = 0; paged(p) && i < pages; ++i) {
      slots[i] = block_table_host[b * p.pages + i];
      if (slots[i] < 0 || slots[i] >= p.pool_slots)
        throw std::runtime_error("sequence " + std::to_string(b) + " page " + std::to_string(i) + " is in slot " +
                                 std::to_string(slots[i]) + ", outside the pool of " + std::to_string(p.pool_slots));
    }
    const int32_t last = static_cast<int32_t>(len - (pages - 1) * page_size);
    for (int64_t i = 0; i < pages; ++i) t.indices.push_back(static_cast<int32_t>(page_number(p, b, i, slots[i])));
    t.indptr.push_back(static_cast<int32_t>(t.indices.size()));
    t.last_page_len.push_back(last);
  }
  return t;
}

}  // namespace abfi

// attnbench's K/V as FlashInfer pages (paged_kv_t with explicit strides, kHND order): each request's page indptr,
// page numbers and last-page length, built on the host from the block table and kv_lens, and the strides that
// turn a page number, a head and a token into an element offset (page * strides[0] + head * strides[1] +
// token * strides[2]).
//
// attnbench's paged pool [slots, KVH, page_size, D] is FlashInfer's HND layout as it is: page number = slot.
// Contiguous K/V [B, KVH, S, D] is seen as pages of kContiguousPageSize tokens whose page numbers count tokens
// (page stride = one row: page b*KVH*S + i*16 is tokens 16i.. of sequence b, head stride S*D), so that FlashInfer's
// planner can split a long sequence's KV as it does a paged one (it splits at page granularity; one page per
// sequence would never split).
//
// A FlashInfer request is a sequence (FlashInfer's own cut): request b's pages hold every KV head.
#pragma once
#include <attnbench/plugin.h>

#include <cstdint>
#include <vector>

namespace abfi {

// Tokens in one of contiguous K/V's virtual pages (the page size serving stacks use with FlashInfer; its planner
// splits KV into chunks of at least 128 tokens, 8 such pages).
constexpr int64_t kContiguousPageSize = 16;

struct PageTable {
  uint32_t requests = 0;
  uint32_t page_size = 0;
  uint32_t kv_heads = 0;          // KV heads every request reads (KVH)
  int64_t strides[3] = {0, 0, 0}; // elements per page number, head and token (paged_kv_t's kv_strides, HND)
  std::vector<int32_t> indptr;        // [requests + 1]: request r's pages are indices[indptr[r] .. indptr[r+1])
  std::vector<int32_t> indices;       // page numbers
  std::vector<int32_t> last_page_len; // [requests]: tokens in each request's last page (1 .. page_size)
};

// Why FlashInfer's 32-bit page numbers, page counts, page stride or token positions cannot describe this
// problem's K/V, or nullptr when they can.
const char* page_table_limit(const ab_problem& p);

// The table for `p`'s K/V from the host block table (paged; NULL for contiguous) and the host kv_lens.
// Throws std::runtime_error on an input it cannot describe (a KV length of 0 or past seq_len, a page
// missing from the block table, a slot outside the pool).
PageTable build_page_table(const ab_problem& p, const int32_t* block_table_host, const int32_t* kv_lens_host);

}  // namespace abfi

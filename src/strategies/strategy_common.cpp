// Shared strategy helpers.
#include "strategies/strategy_common.hpp"

namespace ab {

namespace {
const void* page_ptr(const Problem& p, const AttentionIO& io, const void* base, std::int64_t b, std::int64_t kvh,
                     std::int64_t page, std::int64_t width) {
  if (p.kv_layout == KvLayout::contiguous)
    return offset_ptr(base, ((b * p.kv_heads + kvh) * p.seq_len + page * p.page_size) * width, p.dtype);
  std::int64_t slot = io.block_table_host[b * p.pages + page];
  return offset_ptr(base, (slot * p.kv_heads + kvh) * p.page_size * width, p.dtype);
}
}  // namespace

const void* k_page_ptr(const Problem& p, const AttentionIO& io, std::int64_t b, std::int64_t kvh, std::int64_t page) {
  return page_ptr(p, io, io.k, b, kvh, page, p.head_dim);
}

const void* v_page_ptr(const Problem& p, const AttentionIO& io, std::int64_t b, std::int64_t kvh, std::int64_t page) {
  return page_ptr(p, io, io.v, b, kvh, page, p.head_dim_v);
}

QueryRows query_rows(const Problem& p, const StrategyOptions& opt) {
  QueryRows r;
  r.packed = p.group() > 1 && opt.gqa_packing;
  r.items = r.packed ? p.b_kvh() : p.bh();
  r.rows = r.packed ? p.group() * p.q_len : p.q_len;
  r.items_per_seq = r.packed ? p.kv_heads : p.heads;
  r.group = r.packed ? 1 : p.group();
  return r;
}

std::int64_t page_products(const Problem& p, const QueryRows& qr) {
  std::int64_t n = 0;
  for (std::int64_t b = 0; b < p.batch; ++b) n += p.pages_of(b);
  return size_mul(n, qr.items_per_seq);
}

KeyMask key_mask(const Problem& p, const AttentionIO& io, const QueryRows& qr) {
  KeyMask m;
  m.causal = p.causal;
  m.q_len = p.q_len;
  m.kv_len = p.seq_len;
  m.kv_lens = p.ragged() ? io.kv_lens : nullptr;
  m.q_lens = p.mixed() ? io.q_lens : nullptr;
  m.items_per_seq = qr.items_per_seq;
  m.window = p.window;
  m.softcap = static_cast<double>(p.softcap);
  return m;
}

SoftmaxSinks softmax_sinks(const Problem& p, const AttentionIO& io, const QueryRows& qr) {
  SoftmaxSinks s;
  if (!p.sinks) return s;
  s.logits = io.sinks;
  s.items_per_seq = qr.items_per_seq;
  s.heads_per_item = qr.packed ? p.group() : 1;
  s.q_len = p.q_len;
  return s;
}

GatherArgs make_gather_args(const Problem& p, const AttentionIO& io, void* k_dst, void* v_dst, std::int64_t group) {
  GatherArgs g;
  g.k_src = io.k;
  g.v_src = io.v;
  g.block_table = io.block_table;
  g.kv_lens = p.ragged() ? io.kv_lens : nullptr;
  g.paged = p.kv_layout == KvLayout::paged;
  g.k_dst = k_dst;
  g.v_dst = v_dst;
  g.batch = p.batch;
  g.kv_heads = p.kv_heads;
  g.group = group;
  g.seq_len = p.seq_len;
  g.pages = p.pages;
  g.page_size = p.page_size;
  g.head_dim = p.head_dim;
  g.head_dim_v = p.head_dim_v;
  g.dtype = p.dtype;
  return g;
}

}  // namespace ab

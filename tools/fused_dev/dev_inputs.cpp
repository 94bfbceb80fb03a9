// Host inputs of a harness problem from make_random_inputs.
#include "dev_inputs.hpp"

namespace ab::fused_dev {

HostTensors make_dev_inputs(const Problem& p, std::uint64_t seed) {
  HostTensors t = make_random_inputs(p, seed);
  for (std::int64_t i = 0, n = static_cast<std::int64_t>(t.q.size()); i < n; ++i)
    store_element(t.q.data(), i, p.dtype, kQuerySpread * load_element(t.q.data(), i, p.dtype));
  // NaN in every K/V row a sequence does not own: past its length in contiguous K/V (ragged), past its
  // length in its last pool page (paged), for every KV head.
  auto poison_row = [&](std::int64_t row_start) {
    for (std::int64_t d = 0; d < p.head_dim; ++d) {
      t.k[row_start + d] = kNanBits;
      t.v[row_start + d] = kNanBits;
    }
  };
  const bool paged = p.kv_layout == KvLayout::paged;
  for (std::int64_t b = 0; b < p.batch; ++b) {
    const std::int64_t last = paged ? p.pages_of(b) - 1 : 0;
    const std::int64_t slot = paged ? t.block_table[b * p.pages + last] : 0;
    for (std::int64_t h = 0; h < p.kv_heads; ++h) {
      if (paged) {
        for (std::int64_t row = p.page_len(b, last); row < p.page_size; ++row)
          poison_row(((slot * p.kv_heads + h) * p.page_size + row) * p.head_dim);
      } else {
        for (std::int64_t s = p.kv_len(b); s < p.seq_len; ++s)
          poison_row(((b * p.kv_heads + h) * p.seq_len + s) * p.head_dim);
      }
    }
  }
  return t;
}

}  // namespace ab::fused_dev

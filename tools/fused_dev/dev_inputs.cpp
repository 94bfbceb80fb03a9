// Host inputs of a harness problem from make_random_inputs.
#include "dev_inputs.hpp"

namespace ab::fused_dev {

HostTensors make_dev_inputs(const Problem& p, std::uint64_t seed) {
  HostTensors t = make_random_inputs(p, seed);
  for (std::int64_t i = 0, n = static_cast<std::int64_t>(t.q.size()); i < n; ++i)
    store_element(t.q.data(), i, p.dtype, kQuerySpread * load_element(t.q.data(), i, p.dtype));
  if (p.kv_layout != KvLayout::paged) return t;
  const std::int64_t last = p.pages - 1;
  for (std::int64_t b = 0; b < p.batch; ++b) {
    const std::int64_t slot = t.block_table[b * p.pages + last];
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t row = p.last_page_len(); row < p.page_size; ++row)
        for (std::int64_t d = 0; d < p.head_dim; ++d) {
          const std::int64_t i = ((slot * p.heads + h) * p.page_size + row) * p.head_dim + d;
          t.k[i] = kNanBits;
          t.v[i] = kNanBits;
        }
  }
  return t;
}

}  // namespace ab::fused_dev

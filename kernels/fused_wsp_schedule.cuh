// The static work order of the persistent warp-specialized fused kernel (fused_kernel_wsp.cuh): which
// (batch*head, query block) a CTA runs in its k-th round. Host and device code (no CUDA API calls).
//
// A launch of G CTAs over `items` = m_blocks * batch * heads work items runs rounds: in round k, CTA c takes
// item k*G + c (even rounds) or k*G + (G-1-c) (odd rounds: a snake, so the CTA that got the heaviest item of
// one round gets the lightest of the next). Item i is
//   causal:     query block m_blocks-1 - i / (batch*heads) of head i % (batch*heads): the longest blocks
//               (the most key tiles under the diagonal) first across every head, so the last round holds
//               the shortest blocks and the tail is short;
//   not causal: query block i % m_blocks of head i / m_blocks: a head's blocks side by side, so the CTAs
//               running at one time share that head's K/V in L2.
// A static order rather than an atomic counter: the prefill launch has no workspace to reset a counter in
// before every launch, and with the snake the largest difference between two CTAs' work is about one item
// (B=8 H=16 S=2048 causal, 132 CTAs: about 0.5 % over the average instead of 3 % for plain striding).
#pragma once

namespace ab::kernels::fused_detail {

struct WspItem {
  int bh;       // batch * heads + head
  int m_block;  // query block
};

// Item index of CTA `cta` (of `grid`) in round `round`; >= items when it has none left.
__host__ __device__ __forceinline__ long long wsp_item_index(int round, int cta, int grid) {
  const long long base = static_cast<long long>(round) * grid;
  return base + ((round & 1) ? grid - 1 - cta : cta);
}

__host__ __device__ __forceinline__ WspItem wsp_item(long long i, int m_blocks, int bh_count, bool causal) {
  WspItem w;
  if (causal) {
    w.bh = static_cast<int>(i % bh_count);
    w.m_block = m_blocks - 1 - static_cast<int>(i / bh_count);
  } else {
    w.m_block = static_cast<int>(i % m_blocks);
    w.bh = static_cast<int>(i / m_blocks);
  }
  return w;
}

}  // namespace ab::kernels::fused_detail

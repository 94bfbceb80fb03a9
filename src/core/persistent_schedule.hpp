// The static work order of the persistent warp-specialized fused kernel (kernels/fused_kernel_wsp.cuh):
// which (batch*head, query block) a CTA runs in its k-th round. Host and device code (no CUDA headers), so
// the CPU tests check the order the kernel walks.
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
// before every launch. Modelled on 132 SMs (key tiles per CTA, tests/cpu/test_persistent_schedule.cpp): at
// B=2 H=16 S=8192 causal the busiest CTA is 0.2 % over the mean (plain striding: 6 %); at B=8 H=16 S=2048
// causal 3.1 %, where a counter's greedy order would reach 0.1 % (the last partial round gives some CTAs
// one item more); non-causal items are all equal, and the tail is the partial last round either way.
#pragma once

#ifndef AB_HOST_DEVICE  // as core/key_mask.hpp
#if defined(__CUDACC__)
#define AB_HOST_DEVICE __host__ __device__
#else
#define AB_HOST_DEVICE
#endif
#endif

namespace ab {

struct WspItem {
  int bh;       // batch * heads + head
  int m_block;  // query block
};

// Item index of CTA `cta` (of `grid`) in round `round`; >= items when it has none left (then it has none in
// any later round either).
AB_HOST_DEVICE inline long long wsp_item_index(int round, int cta, int grid) {
  const long long base = static_cast<long long>(round) * grid;
  return base + ((round & 1) ? grid - 1 - cta : cta);
}

AB_HOST_DEVICE inline WspItem wsp_item(long long i, int m_blocks, int bh_count, bool causal) {
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

}  // namespace ab

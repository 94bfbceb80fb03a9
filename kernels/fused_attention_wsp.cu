// Persistent warp-specialized Hopper fused attention tiles (fused_kernel_wsp.cuh): m128n128w12s2wsp for
// head_dim 128 (its default); for 64 m128n64w12s3wsp, m128n128w12s3wsp (cuDNN's shape of work there: two
// consumer warpgroups, 128-key tiles, 3 stages; 2 % faster than the default causal on an H200, 2.5 % slower
// non-causal), and with three consumer warpgroups m192n64w16s3wsp and FlashAttention-3's 192 x 128 block on
// 2, 3 and 4 K/V stages: m192n128w16s2wsp, m192n128w16s3wsp and m192n128w16s4wsp (the head_dim-64 default:
// 1-2 % ahead of three stages non-causal at S=512 on an H200, level causal; a fourth stage lets the producer
// run one tile further into the next item, whose 4 key tiles are short). The head_dim-64 tiles with 128-key
// tiles have their consumer warpgroups take turns (WspCfg::TURNS). At head_dim 128 also m128n160w12s2wsp
// (160-key tiles, O staged in the item's Q buffer: on an H200 0.2-0.5 % faster than the default non-causal,
// 3 % slower causal at S=2048; session 32). tune searches them; --tile picks them. m128n128w12s2wsp splits a
// partial last round of long non-causal blocks over the grid (WspCfg::TAIL; session 33).
// And the developer cap on their grid and the developer build's load-balance record (fused_dev_hooks.cuh).
#include "fused_dev_hooks.cuh"
#include "fused_wsp_launch.cuh"

namespace ab::kernels {

namespace {
int g_wsp_grid_cap = 0;        // 0: no cap
int g_wsp_tail_min_gain = 0;   // 0: kTailMinGain
}  // namespace

void fused_set_persistent_grid_cap(int ctas) { g_wsp_grid_cap = ctas > 0 ? ctas : 0; }
void fused_set_tail_min_gain(int tiles) { g_wsp_tail_min_gain = tiles > 0 ? tiles : 0; }

bool fused_set_cta_times(unsigned long long* times) {
#ifdef AB_CTA_TIMES
  return cudaMemcpyToSymbol(fused_detail::g_cta_times, &times, sizeof(times)) == cudaSuccess;
#else
  (void)times;
  return false;
#endif
}

namespace fused_detail {

int wsp_grid_cap() { return g_wsp_grid_cap; }
int wsp_tail_min_gain() { return g_wsp_tail_min_gain; }

const Entry* entries_wsp(int* count) {
  static const Entry e[] = {
      make_entry_wsp<128, 128, 2, 2, false, 2, true>(), make_entry_wsp<128, 128, 2, 2, true, 2, true>(),
#ifndef ATTNBENCH_DEFAULT_TILES_ONLY  // the head_dim 128 and 64 defaults (first, last) alone: CMake's ATTNBENCH_ALL_TILES=OFF
      make_entry_wsp<128, 160, 2, 2, false>(), make_entry_wsp<128, 160, 2, 2, true>(),
      make_entry_wsp<64, 64, 3, 2, false>(),   make_entry_wsp<64, 64, 3, 2, true>(),
      make_entry_wsp<64, 128, 3, 2, false>(),  make_entry_wsp<64, 128, 3, 2, true>(),
      make_entry_wsp<64, 64, 3, 3, false>(),   make_entry_wsp<64, 64, 3, 3, true>(),
      make_entry_wsp<64, 128, 2, 3, false>(),  make_entry_wsp<64, 128, 2, 3, true>(),
      make_entry_wsp<64, 128, 3, 3, false>(),  make_entry_wsp<64, 128, 3, 3, true>(),
#endif
      // The narrow-window default at head_dim 64 (core/fused_default_tile.hpp), before the head_dim-64 default.
      make_entry_wsp<64, 64, 5, 3, false, 3>(),  make_entry_wsp<64, 64, 5, 3, true, 3>(),
      make_entry_wsp<64, 128, 4, 3, false, 3>(),  make_entry_wsp<64, 128, 4, 3, true, 3>(),
  };
  *count = static_cast<int>(sizeof(e) / sizeof(e[0]));
  return e;
}

}  // namespace fused_detail
}  // namespace ab::kernels

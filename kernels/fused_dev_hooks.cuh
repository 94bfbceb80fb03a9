// Developer hooks of the fused attention kernels (scripts/fused_dev): no CUDA headers, host code only.
// Not part of the backend interface (kernels/fused_attention.hpp).
#pragma once
#include <string>
#include <vector>

#include "core/fused_tile.hpp"

namespace ab::kernels {

// One kernel table entry (kernels/fused_kernel.cuh's Entry) with its resource use.
struct FusedKernelInfo {
  int head_dim = 0;
  FusedTile tile;         // its family and geometry (tile.wgmma(): the Hopper warpgroup-MMA kernels)
  bool bf16 = false;
  int smem_bytes = 0;     // dynamic shared memory per CTA
  bool q_in_regs = false; // Q fragments held in registers across the KV loop
  bool tail_split = false; // it may split its last round over the grid (the pieces' partials merged)
  int regs = -1;          // from cudaFuncGetAttributes (-1 when it failed)
  int local_bytes = -1;   // spill / stack bytes per thread
};

// Every compiled kernel instantiation with its resource use (needs a CUDA device for regs/local).
std::vector<FusedKernelInfo> fused_kernel_infos();

// Caps the grid of the persistent tiles ("...wsp") at `ctas` CTAs (0: no cap, one CTA per SM), so a small
// problem has each CTA walk several work items (the checks and tests of the item loop). Process-wide.
void fused_set_persistent_grid_cap(int ctas);

// Sets the persistent tiles' tail split threshold (core/query_block_order.hpp: tail_split's min_gain) to
// `tiles` (0: kTailMinGain), so that small problems on capped grids split their last round (the checks and
// tests of the split). Process-wide.
void fused_set_tail_min_gain(int tiles);

// Words per CTA in the persistent kernel's load-balance record: its start, then the ends of consumer
// warpgroups 1..3.
inline constexpr int kCtaTimeSlots = 4;
// Points the persistent kernel's load-balance record at `times` (device memory, kCtaTimeSlots words per CTA,
// %globaltimer ns; nullptr: no record). False when the kernels were built without -DATTNBENCH_CTA_TIMES=ON
// (fused_cta_times.cuh) or the copy failed.
bool fused_set_cta_times(unsigned long long* times);

}  // namespace ab::kernels

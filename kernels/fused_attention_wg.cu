// Fused attention kernels on Hopper's warpgroup MMA (see fused_kernel_wg.cuh), head_dim 64 and 128.
// Instantiated per head_dim where they were fastest on the H200 (docs/perf-notes.md): m128n128w8 and
// m192n64w12 for 128, m256n64w16 for 64, m128n64w8 for both.
#include "fused_kernel_wg.cuh"

namespace ab::kernels::fused_detail {

const Entry* entries_wg(int* count) {
#ifdef ATTNBENCH_DEFAULT_TILES_ONLY  // no default tile is a wgmma-kernel tile: CMake's ATTNBENCH_ALL_TILES=OFF
  *count = 0;
  return nullptr;
#else
  static const Entry e[] = {
      make_entry_wg<64, 64, 2, false>(),   make_entry_wg<64, 64, 2, true>(),
      make_entry_wg<64, 64, 4, false>(),   make_entry_wg<64, 64, 4, true>(),
      make_entry_wg<128, 128, 2, false>(), make_entry_wg<128, 128, 2, true>(),
      make_entry_wg<128, 64, 2, false>(),  make_entry_wg<128, 64, 2, true>(),
      make_entry_wg<128, 64, 3, false>(),  make_entry_wg<128, 64, 3, true>(),
  };
  *count = static_cast<int>(sizeof(e) / sizeof(e[0]));
  return e;
#endif
}

}  // namespace ab::kernels::fused_detail

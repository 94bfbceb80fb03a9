// Fused attention kernels instantiated for head_dim 32, 96 and 256 (see fused_kernel.cuh), each with the variants'
// instance too (the window, the soft-cap and the sinks: no persistent tile covers these head dims; Gemma-2's 256).
#include "fused_kernel.cuh"

namespace ab::kernels::fused_detail {

const Entry* entries_dother(int* count) {
  static const Entry e[] = {
      make_entry<32, 128, 128, 4, 2, false, true>(), make_entry<32, 128, 128, 4, 2, true, true>(),
      make_entry<32, 64, 64, 4, 2, false, true>(),   make_entry<32, 64, 64, 4, 2, true, true>(),
      make_entry<96, 128, 64, 4, 2, false, true>(),  make_entry<96, 128, 64, 4, 2, true, true>(),
      make_entry<96, 64, 64, 4, 2, false, true>(),   make_entry<96, 64, 64, 4, 2, true, true>(),
      make_entry<256, 64, 32, 4, 2, false, true>(),  make_entry<256, 64, 32, 4, 2, true, true>(),
  };
  *count = static_cast<int>(sizeof(e) / sizeof(e[0]));
  return e;
}

}  // namespace ab::kernels::fused_detail

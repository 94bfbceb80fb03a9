// Fused attention kernels instantiated for head_dim 128 (see fused_kernel.cuh).
#include "fused_kernel.cuh"

namespace ab::kernels::fused_detail {

const Entry* entries_d128(int* count) {
  static const Entry e[] = {
      make_entry<128, 128, 64, 4, 2, false>(), make_entry<128, 128, 64, 4, 2, true>(),
      make_entry<128, 128, 64, 4, 3, false>(), make_entry<128, 128, 64, 4, 3, true>(),
      make_entry<128, 64, 64, 4, 2, false>(),  make_entry<128, 64, 64, 4, 2, true>(),
      make_entry<128, 128, 32, 4, 2, false>(), make_entry<128, 128, 32, 4, 2, true>(),
      make_entry<128, 64, 32, 4, 2, false>(),  make_entry<128, 64, 32, 4, 2, true>(),
  };
  *count = static_cast<int>(sizeof(e) / sizeof(e[0]));
  return e;
}

}  // namespace ab::kernels::fused_detail

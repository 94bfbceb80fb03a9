// The resident CTAs per SM of one kernel instance at its block size and dynamic shared memory, from the runtime
// (registers, shared memory and threads as compiled for this device): what a launch model should assume instead
// of a design constant. 0 where the runtime cannot say.
#pragma once
#include <cuda_runtime.h>

namespace ab::kernels::fused_detail {

template <class Kernel>
int resident_ctas_per_sm(Kernel kern, int threads, int smem_bytes) {
  if (smem_bytes > 48 * 1024 &&
      cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  int n = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kern, threads, smem_bytes) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace ab::kernels::fused_detail

// A deliberately faulting kernel for tests of error isolation (ATTNBENCH_INJECT_FAULT): it writes through
// an invalid pointer, which leaves the CUDA context with a sticky illegal-address error.
#include <cuda_runtime.h>

#include "fault_injection.hpp"

namespace ab::kernels {

__global__ void illegal_write_kernel(int* p) { p[threadIdx.x] = 42; }

int launch_illegal_write(void* stream) {
  illegal_write_kernel<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(reinterpret_cast<int*>(0x10));
  return static_cast<int>(cudaGetLastError());
}

}  // namespace ab::kernels

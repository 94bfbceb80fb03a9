// The delay kernel: one thread spinning on %globaltimer (nanoseconds) until `ns` have passed. It runs in
// stream order, so inside a forward (or a captured graph) it lengthens the forward by about `ns` plus one
// launch; the runner calibrates that launch away (src/run/injected_slowdown.cpp).
#include <cuda_runtime.h>

#include "delay.hpp"

namespace ab::kernels {

namespace {
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
}  // namespace

__global__ void delay_kernel(unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
}

int launch_delay(std::uint64_t ns, void* stream) {
  delay_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<unsigned long long>(ns));
  return static_cast<int>(cudaGetLastError());
}

}  // namespace ab::kernels

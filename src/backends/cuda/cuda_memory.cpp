// cudaMalloc/cudaFree with allocation tracking, and stream-ordered copies and fills.
#include "backends/cuda/cuda_memory.hpp"

#include <cuda_runtime.h>

#include <fmt/format.h>

#include "backends/cuda/cuda_check.hpp"
#include "core/errors.hpp"

namespace ab::cuda {

void* AllocationTracker::alloc(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw BackendError(fmt::format("cudaMalloc of {} bytes failed: out of memory", bytes));
  }
  if (e != cudaSuccess) throw_cuda_error(e, fmt::format("cudaMalloc of {} bytes", bytes));
  std::lock_guard<std::mutex> lock(mu_);
  live_.insert(p);
  return p;
}

void AllocationTracker::free(void* p) noexcept {
  if (!p) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (live_.erase(p) == 0) return;
  }
  if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

void AllocationTracker::forget_all() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  live_.clear();
}

std::size_t AllocationTracker::live_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_.size();
}

void upload(void* dst, const void* src, std::size_t bytes, void* stream) {
  if (bytes == 0) return;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  AB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
  AB_CUDA_CHECK(cudaStreamSynchronize(s));  // the host buffer may go away right after
}

void download(void* dst, const void* src, std::size_t bytes, void* stream) {
  if (bytes == 0) return;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  AB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
  AB_CUDA_CHECK(cudaStreamSynchronize(s));
}

void fill(void* dst, unsigned char value, std::size_t bytes, void* stream) {
  if (bytes == 0) return;
  AB_CUDA_CHECK(cudaMemsetAsync(dst, value, bytes, static_cast<cudaStream_t>(stream)));
}

}  // namespace ab::cuda

// The L2 flush buffer and its write.
#include "backends/cuda/l2_flush.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include <fmt/format.h>

#include "backends/cuda/cuda_check.hpp"
#include "core/errors.hpp"

namespace ab::cuda {

L2Flusher::~L2Flusher() { release(false); }

void L2Flusher::init(std::int64_t l2_bytes) {
  release(false);
  std::size_t want = std::max<std::size_t>(2 * static_cast<std::size_t>(std::max<std::int64_t>(l2_bytes, 0)), 8u << 20);
  cudaError_t e = cudaMalloc(&buf_, want);
  if (e != cudaSuccess) {
    buf_ = nullptr;
    (void)cudaGetLastError();
    throw BackendError(fmt::format("cudaMalloc of {} bytes for the L2 flush buffer failed: {}", want, cuda_error_text(e)));
  }
  bytes_ = want;
}

void L2Flusher::flush(void* stream) {
  if (!buf_) return;
  value_ = static_cast<unsigned char>(value_ + 1);  // a new value each time, so no write can be skipped
  AB_CUDA_CHECK(cudaMemsetAsync(buf_, value_, bytes_, static_cast<cudaStream_t>(stream)));
}

void L2Flusher::release(bool forget) {
  if (buf_ && !forget && cudaFree(buf_) != cudaSuccess) (void)cudaGetLastError();
  buf_ = nullptr;
  bytes_ = 0;
}

}  // namespace ab::cuda

// Messages of the FlashInfer peers: a printf-style line into the ABI's reason/err buffers, and the exception
// the setup-time code throws for a failed CUDA call (the plugin entry points turn every exception into a line).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace abfi {

// Writes the formatted line into buf (when there is one) and returns 1, the ABI's "no" / "failed".
inline int say(char* buf, std::size_t size, const char* format, ...) {
  if (buf && size) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(buf, size, format, args);
    va_end(args);
  }
  return 1;
}

// A CUDA call that failed: "<what>: <cudaGetErrorString>".
class CudaFailure : public std::runtime_error {
 public:
  CudaFailure(const char* what, cudaError_t e) : std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e)) {}
};

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaFailure(what, e);
}

}  // namespace abfi

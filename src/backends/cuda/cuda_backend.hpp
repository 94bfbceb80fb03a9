// The CUDA backend: cuBLASLt GEMMs, kernels from kernels/, CUDA events, CUPTI launch counting, NVTX.
// No CUDA headers here, so the CLI can include it.
#pragma once
#include <memory>

#include "core/backend.hpp"

namespace ab {

// Number of CUDA devices; 0 when there is no device or no driver (never throws).
int cuda_device_count();
// Throws BackendError when the device cannot be opened.
std::unique_ptr<Backend> make_cuda_backend(int device);

}  // namespace ab

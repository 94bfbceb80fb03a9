// Host API of the fault-injection kernel (no CUDA headers).
#pragma once

namespace ab::kernels {
// Launches a kernel that writes to an invalid address on `stream`; returns the launch's cudaError_t.
int launch_illegal_write(void* stream);
}  // namespace ab::kernels

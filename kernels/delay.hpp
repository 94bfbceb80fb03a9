// Host API of the delay kernel (no CUDA headers): device time that computes nothing, for the CI gate's
// injected slowdowns (ATTNBENCH_INJECT_SLOWDOWN).
#pragma once
#include <cstdint>

namespace ab::kernels {
// Launches one thread that spins on the global timer for `ns` nanoseconds on `stream`; returns the
// launch's cudaError_t.
int launch_delay(std::uint64_t ns, void* stream);
}  // namespace ab::kernels

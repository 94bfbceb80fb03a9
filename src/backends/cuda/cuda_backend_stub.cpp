// Placeholder until the CUDA backend lands: reports no device.
#include "backends/cuda/cuda_backend.hpp"

#include "core/errors.hpp"

namespace ab {
int cuda_device_count() { return 0; }
std::unique_ptr<Backend> make_cuda_backend(int) { throw BackendError("CUDA backend not built yet"); }
}  // namespace ab

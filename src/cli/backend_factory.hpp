// Backend selection for the CLI: --backend=auto|cuda|cpu, with the CPU notice when auto falls back.
#pragma once
#include <memory>
#include <string>

#include "core/backend.hpp"

namespace ab {

// Whether this binary was built with the CUDA backend, and how many devices it sees.
bool cuda_backend_built();
int visible_cuda_devices();

// Throws UsageError for an unknown kind or --backend=cuda without a device. With "auto" and no device,
// prints one line to stderr saying the CPU reference backend runs and its times are not GPU times
// (unless quiet).
std::unique_ptr<Backend> make_backend(const std::string& kind, int device, bool quiet);

}  // namespace ab

// Backend selection for the CLI: --backend=auto|cuda|cpu, with the CPU notice when auto falls back.
#pragma once
#include <memory>
#include <string>

#include "core/backend.hpp"

namespace ab {

// Whether this binary was built with the CUDA backend, and how many devices it sees.
bool cuda_backend_built();
int visible_cuda_devices();
// Whether --backend=KIND runs on the CPU reference backend here: cpu, or auto without a visible CUDA device.
bool runs_on_cpu(const std::string& kind);

// Throws UsageError for an unknown kind or --backend=cuda without a device. With "auto" and no device, the
// CPU reference backend.
std::unique_ptr<Backend> make_backend(const std::string& kind, int device);
// With "auto" that fell back to the CPU backend, one line on stderr saying so and that its times are not GPU
// times (unless quiet). Commands call it once their input passed every check, so that bad input still gets
// one line.
void announce_cpu_fallback(const std::string& kind, const Backend& backend, bool quiet);

}  // namespace ab

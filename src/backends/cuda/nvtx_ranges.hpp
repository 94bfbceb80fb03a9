// NVTX3 ranges (header-only NVTX), so Nsight Systems / Compute show problems, strategies and phases.
#pragma once
#include <string>

namespace ab::cuda {

void nvtx_push(const std::string& name);
void nvtx_pop();

}  // namespace ab::cuda

// NVTX push/pop through nvtx3's header-only API.
#include "backends/cuda/nvtx_ranges.hpp"

#include <nvtx3/nvToolsExt.h>

namespace ab::cuda {

void nvtx_push(const std::string& name) { nvtxRangePushA(name.c_str()); }
void nvtx_pop() { nvtxRangePop(); }

}  // namespace ab::cuda

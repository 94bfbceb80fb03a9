// Device discovery and the DeviceInfo of a CUDA device (name, cc, SMs, L2, memory, versions, clocks).
#pragma once
#include "core/backend.hpp"

namespace ab::cuda {

// Visible devices; 0 when there is no device or no driver. Never throws.
int device_count_noexcept();
// Throws BackendError when a query fails.
DeviceInfo query_device_info(int device);

}  // namespace ab::cuda

// Device discovery and the DeviceInfo of a CUDA device (name, cc, SMs, L2, memory, versions, clocks).
#pragma once
#include <cstddef>

#include "core/backend.hpp"

namespace ab::cuda {

// Visible devices; 0 when there is no device or no driver. Never throws.
int device_count_noexcept();
// Throws BackendError when a query fails.
DeviceInfo query_device_info(int device);
// The device's copy bandwidth in GB/s: a device-to-device cudaMemcpyAsync of 1 GiB (halved while it does not
// fit in a quarter of free memory, down to 64 MiB), timed with events, best of 5 after a warm-up; bytes read
// plus written over the time. 0 when no buffer fits; BackendError on any other CUDA failure. `device` must be
// the current device.
double measure_copy_bandwidth_gbps(int device);
// cudaMalloc that gives nullptr (error cleared) when the device is out of memory; other errors throw
// BackendError naming `what` (the probe that allocates).
void* try_device_alloc(std::size_t bytes, const char* what);

}  // namespace ab::cuda

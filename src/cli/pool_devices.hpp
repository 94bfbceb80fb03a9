// Turning --devices into the pool's devices (CUDA: counted and pinned through CUDA_VISIBLE_DEVICES; the CPU
// backend: one worker process per index), and the check that they are one model.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/shared_flags.hpp"
#include "cli/worker_pool.hpp"

namespace ab {

// The devices --devices names for the backend --backend picks. Throws UsageError for --device beside
// --devices, a device that does not exist, or --backend=cuda without one.
std::vector<PoolDevice> pool_devices(const SharedFlags& f);

// Refuses (UsageError) devices of different models unless `mixed` (--mixed_devices); with `mixed` and
// different models, returns the warning the report carries, else "".
std::string check_device_models(const std::vector<nlohmann::json>& devices, bool mixed);

// "0: NVIDIA H200, 1: NVIDIA H200": the devices as the header and progress line name them.
std::string describe_devices(const std::vector<nlohmann::json>& devices);

}  // namespace ab

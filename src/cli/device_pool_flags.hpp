// The --devices flags as the pool's plain options (orchestrate/ takes no flag struct), and a run worker's entry
// with run's flags (the parent's side, run_grid_on_devices, is called by cli/run_command.cpp).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "orchestrate/pool_devices.hpp"
#include "cli/run_command.hpp"
#include "cli/shared_flags.hpp"
#include "core/backend.hpp"
#include "run/runner.hpp"

namespace ab {

// --devices, --backend, --device, --mixed_devices and --quiet, with what this binary and process offer.
DevicePoolOptions device_pool_options(const SharedFlags& f);
// A worker's --worker_dir and --worker_device (hidden flags the pool sets).
WorkerSeat worker_seat(const SharedFlags& f);

// A run worker (--worker_dir): serves the problems the pool hands it.
int serve_run_tasks(const RunFlags& f, Backend& backend, const RunOptions& opt, const std::vector<std::string>& warnings,
                    const nlohmann::json& settings);

}  // namespace ab

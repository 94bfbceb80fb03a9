// `run --devices`: the parent that spreads a grid's problems over one worker per device and gathers one
// report, and the worker that runs the problems it is handed (orchestrate/worker_pool.hpp).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "orchestrate/pool_devices.hpp"
#include "core/backend.hpp"
#include "run/run_report.hpp"
#include "run/runner.hpp"

namespace ab {

// The parent: `opt` is the checked run (its problems are the queue), `argv` this process's command line (the
// workers' arguments and the report's command). Returns the report: every row in grid order, stamped with its
// device; a dead worker's problem as failed rows. The caller prints and writes it.
Report run_grid_on_devices(const DevicePoolOptions& pool, const RunOptions& opt, const std::vector<std::string>& argv);

// The worker: serves problems until the pool ends it; each task's rows go to the pool's file as a report with
// `settings` and `warnings`. Returns the exit code.
int serve_run_tasks(const WorkerSeat& seat, Backend& backend, const RunOptions& opt,
                    const std::vector<std::string>& warnings, const nlohmann::json& settings);

}  // namespace ab

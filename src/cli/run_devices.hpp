// `run --devices`: the parent that spreads a grid's problems over one worker per device and writes one
// report, and the worker that runs the problems it is handed (cli/worker_pool.hpp).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_command.hpp"
#include "core/backend.hpp"
#include "run/runner.hpp"

namespace ab {

// The parent: `opt` is the checked run (its problems are the queue). Prints the table, writes --json, and
// returns run's exit code.
int run_on_devices(const RunFlags& f, const RunOptions& opt, const std::vector<std::string>& argv);

// The worker (--worker_dir): serves problems until the pool ends it; each task's rows go to the pool's file
// as a report with `settings` and `warnings`.
int serve_run_tasks(const RunFlags& f, Backend& backend, const RunOptions& opt, const std::vector<std::string>& warnings,
                    const nlohmann::json& settings);

}  // namespace ab

// `run --devices`: the parent that spreads a grid's problems over one worker per device and gathers one
// report, and the worker that runs the problems it is handed (orchestrate/worker_pool.hpp).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "orchestrate/grid_journal.hpp"
#include "orchestrate/pool_devices.hpp"
#include "core/backend.hpp"
#include "run/run_report.hpp"
#include "run/runner.hpp"

namespace ab {

// How a --devices run keeps its journal (orchestrate/grid_journal.hpp), as a one-process run does: opened
// once the workers have said which device they run on (its header names the first one's model), a resumed
// journal's problems not handed out, and each problem journaled as its last task ends.
struct DevicesJournal {
  std::function<GridJournal(const nlohmann::json& device)> open;  // unset: no journal
  std::vector<std::string> strategies;  // the names each problem's rows come from (a journal entry's check)
};

// What a --devices run ends with.
struct DevicesRun {
  Report report;               // the finished problems' rows in grid order (resumed ones too), each with its device
  GridJournal journal;         // the caller finishes it once the report is written
  std::size_t finished = 0;    // problems with rows, resumed ones included (fewer than the grid's: a signal stopped it)
};

// The parent: `opt` is the checked run (its problems are the queue), `argv` this process's command line (the
// workers' arguments and the report's command). `estimated_s` (per problem, run/run_estimate.hpp; empty: grid
// order) orders the queue longest first. A dead worker's problem becomes failed rows. The caller prints and
// writes the report.
DevicesRun run_grid_on_devices(const DevicePoolOptions& pool, const RunOptions& opt, const std::vector<std::string>& argv,
                               const DevicesJournal& journal, const std::vector<double>& estimated_s = {});

// The worker: serves problems until the pool ends it; each task's rows go to the pool's file as a report with
// `settings` and `warnings`. Returns the exit code.
int serve_run_tasks(const WorkerSeat& seat, Backend& backend, const RunOptions& opt,
                    const std::vector<std::string>& warnings, const nlohmann::json& settings);

}  // namespace ab

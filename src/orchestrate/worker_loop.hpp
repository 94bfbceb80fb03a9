// The worker's side of the --devices pool (orchestrate/worker_pool.hpp): say "ready" with the device, then serve
// "ITEM START" tasks from stdin until it ends, answering "done ITEM" ("done ITEM retire" before it exits) or "lost ITEM NEXT" on stdout.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ab {

struct WorkerTask {
  std::size_t item = 0, start = 0;
  std::string file;  // where the task's result goes (written atomically by the serving function)
};

// How a task ended for the worker: `next` is the strategy to continue from when the device context broke
// (the worker says "lost" and exits); `retire` ends the worker after "done" (a row failed: the pool starts a
// fresh process with a clean context for the rest of the queue).
struct TaskEnd {
  std::optional<std::size_t> next;
  bool retire = false;
};

// Serves tasks until stdin ends (or a task ends it); returns the exit code (0). `serve` runs one task and
// writes task.file. Test hooks (docs/scale-out-devices.md): ATTNBENCH_INJECT_WORKER_KILL=ITEM makes the
// worker SIGKILL itself on that item; ATTNBENCH_INJECT_DEVICE_MODEL=D:NAME makes device D report model NAME.
int serve_worker_tasks(const std::string& dir, int device, nlohmann::json device_json,
                       const std::function<TaskEnd(const WorkerTask&)>& serve);

// The model name the pool compares across devices (the device JSON's "name").
std::string device_model(const nlohmann::json& device_json);

}  // namespace ab

// The worker's loop: the ready line, reading tasks, the test hooks, and the answer after each task.
#include "orchestrate/worker_loop.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "core/phase_trace.hpp"

namespace ab {

namespace {

// ATTNBENCH_INJECT_DEVICE_MODEL=D:NAME (a test of the mixed-model refusal on the CPU backend).
void apply_injected_model(int device, nlohmann::json& device_json) {
  const char* spec = std::getenv("ATTNBENCH_INJECT_DEVICE_MODEL");
  if (!spec) return;
  std::string s = spec;
  std::size_t colon = s.find(':');
  if (colon != std::string::npos && s.substr(0, colon) == std::to_string(device)) device_json["name"] = s.substr(colon + 1);
}

// ATTNBENCH_INJECT_WORKER_KILL=ITEM: the worker that receives ITEM kills itself, as an OOM killer or a
// user would (a test of the pool's dead-worker path).
void maybe_die(std::size_t item) {
  const char* spec = std::getenv("ATTNBENCH_INJECT_WORKER_KILL");
  if (spec && *spec && std::to_string(item) == spec) std::raise(SIGKILL);
}

}  // namespace

std::string device_model(const nlohmann::json& device_json) {
  auto it = device_json.find("name");
  return it != device_json.end() && it->is_string() ? it->get<std::string>() : std::string("unknown");
}

int serve_worker_tasks(const std::string& dir, int device, nlohmann::json device_json,
                       const std::function<TaskEnd(const WorkerTask&)>& serve) {
  apply_injected_model(device, device_json);
  std::printf("ready %s\n", device_json.dump().c_str());
  std::fflush(stdout);
  trace_phase(fmt::format("worker {}: ready", device));
  std::string line;
  while (std::getline(std::cin, line)) {
    WorkerTask task;
    if (std::sscanf(line.c_str(), "%zu %zu", &task.item, &task.start) != 2) continue;
    task.file = fmt::format("{}/task-{}-{}.json", dir, task.item, task.start);
    if (task.start == 0) maybe_die(task.item);
    trace_phase(fmt::format("worker {}: task {} begins", device, task.item));
    const TaskEnd end = serve(task);
    trace_phase(fmt::format("worker {}: task {} ends", device, task.item));
    if (end.next) {
      std::printf("lost %zu %zu\n", task.item, *end.next);
      std::fflush(stdout);
      return 0;
    }
    std::printf("done %zu%s\n", task.item, end.retire ? " retire" : "");
    std::fflush(stdout);
    if (end.retire) return 0;
  }
  trace_phase(fmt::format("worker {}: no more tasks", device));
  return 0;
}

}  // namespace ab

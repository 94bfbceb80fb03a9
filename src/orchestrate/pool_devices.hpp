// Turning --devices into the pool's devices (CUDA: counted and pinned through CUDA_VISIBLE_DEVICES; the CPU
// backend: one worker process per index), the check that they are one model, and the pool's progress line.
// The command line reaches the pool as plain options (cli/device_pool_flags.hpp fills them from the flags).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "orchestrate/worker_pool.hpp"
#include "measure/progress.hpp"

namespace ab {

// What a run or tune over several devices is asked for, and what this binary and process can offer.
struct DevicePoolOptions {
  std::string devices;           // --devices: "all" or indices like "0,2"
  std::string backend = "auto";  // --backend: auto, cuda or cpu
  bool device_given = false;     // --device was given too (refused beside --devices)
  bool mixed_devices = false;    // --mixed_devices: devices of different models are allowed
  bool quiet = false;            // no header or progress line
  bool cuda_built = false;       // this binary has the CUDA backend
  int visible_cuda_devices = 0;  // the CUDA devices this process sees
};

// A worker's place in the pool, from the hidden flags the pool gives it: the pool's private directory and the
// device index as the user named it.
struct WorkerSeat {
  std::string dir;
  int device = -1;
};

// The devices --devices names for the backend --backend picks. Throws UsageError for --device beside
// --devices, a device that does not exist, or --backend=cuda without one.
std::vector<PoolDevice> pool_devices(const DevicePoolOptions& o);

// Refuses (UsageError) devices of different models unless `mixed` (--mixed_devices); with `mixed` and
// different models, returns the warning the report carries, else "".
std::string check_device_models(const std::vector<nlohmann::json>& devices, bool mixed);

// "0: NVIDIA H200, 1: NVIDIA H200": the devices as the header and progress line name them.
std::string describe_devices(const std::vector<nlohmann::json>& devices);

// The pool's one progress line on stderr: "[6/12] device 0: 3, device 1: 2  elapsed 4.1s  ETA 5.8s". The ETA
// comes from the run's throughput (all devices together): each point spans one completion to the next.
class PoolProgress {
 public:
  PoolProgress(const WorkerPool& pool, std::size_t total, bool quiet);
  void task_finished();  // call after each problem's outcome
  void add_tasks(std::size_t n);  // more tasks than the total given (tune --devices' split search)
  void finish() { progress_.finish(); }

 private:
  std::string counts() const;
  const WorkerPool& pool_;
  std::int64_t total_, finished_ = 0;
  Progress progress_;
};

}  // namespace ab

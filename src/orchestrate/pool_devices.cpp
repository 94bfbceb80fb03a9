// --devices → pool devices, and the one-model check.
#include "orchestrate/pool_devices.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "orchestrate/device_list.hpp"
#include "orchestrate/worker_loop.hpp"
#include "core/errors.hpp"

namespace ab {

std::vector<PoolDevice> pool_devices(const DevicePoolOptions& o) {
  if (o.device_given) throw UsageError("--device and --devices: give one (--devices=N runs on device N alone)");
  const int visible = o.visible_cuda_devices;
  bool cuda = false;
  if (o.backend == "cuda") {
    if (!o.cuda_built) throw UsageError("--backend=cuda: this binary was built without CUDA (-DATTNBENCH_CUDA=OFF)");
    if (visible == 0) throw UsageError("--backend=cuda: no CUDA device is visible");
    cuda = true;
  } else if (o.backend == "auto") {
    cuda = visible > 0;
  }
  // The CPU backend's workers are processes on this host: any index names one (a test of the pool).
  std::vector<int> indices = parse_device_list(o.devices, cuda ? visible : -1);
  const char* inherited = std::getenv("CUDA_VISIBLE_DEVICES");
  std::vector<PoolDevice> devices;
  for (int i : indices)
    devices.push_back(PoolDevice{i, cuda ? visible_device_for(i, inherited ? inherited : "") : std::string()});
  return devices;
}

std::string describe_devices(const std::vector<nlohmann::json>& devices) {
  std::string s;
  for (const auto& d : devices)
    s += fmt::format("{}{}: {}", s.empty() ? "" : ", ", d.value("index", -1), device_model(d));
  return s;
}

std::string check_device_models(const std::vector<nlohmann::json>& devices, bool mixed) {
  bool same = true;
  for (const auto& d : devices) same = same && device_model(d) == device_model(devices.front());
  if (same) return "";
  if (!mixed)
    throw UsageError(fmt::format("--devices: the devices are different models ({}), whose numbers do not compare; "
                                 "give --mixed_devices to run on them anyway",
                                 describe_devices(devices)));
  return fmt::format("--mixed_devices: rows come from different GPU models ({}); compare rows of one device only",
                     describe_devices(devices));
}

PoolProgress::PoolProgress(const WorkerPool& pool, std::size_t total, bool quiet)
    : pool_(pool), total_(static_cast<std::int64_t>(total)), progress_(total_, quiet) {
  if (total_ > 0) progress_.begin_point(0, counts());
}

std::string PoolProgress::counts() const {
  std::string s;
  for (std::size_t w = 0; w < pool_.devices().size(); ++w)
    s += fmt::format("{}device {}: {}", s.empty() ? "" : ", ", pool_.devices()[w].index, pool_.finished_per_device()[w]);
  return s;
}

void PoolProgress::add_tasks(std::size_t n) {
  const bool idle = finished_ >= total_;
  total_ += static_cast<std::int64_t>(n);
  progress_.set_total(total_);
  if (idle && finished_ < total_) progress_.begin_point(finished_, counts());
}

void PoolProgress::task_finished() {
  if (finished_ >= total_) return;
  progress_.end_point();
  if (++finished_ < total_) progress_.begin_point(finished_, counts());
}

}  // namespace ab

// The pool's options from the shared flags, and run --devices' worker with run's flags.
#include "cli/device_pool_flags.hpp"

#include "cli/backend_factory.hpp"
#include "orchestrate/run_devices.hpp"

namespace ab {

DevicePoolOptions device_pool_options(const SharedFlags& f) {
  DevicePoolOptions o;
  o.devices = f.devices;
  o.backend = f.backend;
  o.device_given = f.device_given;
  o.mixed_devices = f.mixed_devices;
  o.quiet = f.quiet;
  o.cuda_built = cuda_backend_built();
  o.visible_cuda_devices = visible_cuda_devices();
  return o;
}

WorkerSeat worker_seat(const SharedFlags& f) { return WorkerSeat{f.worker_dir, f.worker_device}; }

int serve_run_tasks(const RunFlags& f, Backend& backend, const RunOptions& opt, const std::vector<std::string>& warnings,
                    const nlohmann::json& settings) {
  return serve_run_tasks(worker_seat(f), backend, opt, warnings, settings);
}

}  // namespace ab

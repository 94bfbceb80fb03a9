// Backend selection: CUDA when built and a device exists, else the CPU reference backend.
#include "cli/backend_factory.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "backends/cpu/cpu_backend.hpp"
#include "core/errors.hpp"
#ifdef ATTNBENCH_HAVE_CUDA
#include "backends/cuda/cuda_backend.hpp"
#endif

namespace ab {

bool cuda_backend_built() {
#ifdef ATTNBENCH_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

int visible_cuda_devices() {
#ifdef ATTNBENCH_HAVE_CUDA
  return cuda_device_count();
#else
  return 0;
#endif
}

bool runs_on_cpu(const std::string& kind) { return kind == "cpu" || (kind == "auto" && visible_cuda_devices() == 0); }

std::unique_ptr<Backend> make_backend(const std::string& kind, int device) {
  if (kind != "auto" && kind != "cuda" && kind != "cpu")
    throw UsageError(fmt::format("--backend: unknown backend '{}' (auto, cuda, cpu)", kind));
  if (kind == "cpu") {
    if (device != 0) throw UsageError(fmt::format("--device={}: the CPU backend has only device 0", device));
    return make_cpu_backend();
  }
  int n = visible_cuda_devices();
  if (kind == "cuda") {
    if (!cuda_backend_built()) throw UsageError("--backend=cuda: this binary was built without CUDA (-DATTNBENCH_CUDA=OFF)");
    if (n == 0) throw UsageError("--backend=cuda: no CUDA device is visible");
  }
  if (n > 0) {
    if (device < 0 || device >= n) throw UsageError(fmt::format("--device={}: only {} CUDA device(s) visible", device, n));
#ifdef ATTNBENCH_HAVE_CUDA
    try {
      return make_cuda_backend(device);
    } catch (const BackendError& e) {
      throw UsageError(fmt::format("cannot open CUDA device {}: {}", device, e.what()));
    }
#endif
  }
  // The CPU backend has one device: another index cannot take effect, so it is refused, not ignored.
  if (device != 0)
    throw UsageError(fmt::format("--device={}: {} CUDA device is visible; the CPU backend has only device 0", device,
                                 cuda_backend_built() ? "no" : "this binary was built without CUDA, so no"));
  return make_cpu_backend();
}

void announce_cpu_fallback(const std::string& kind, const Backend& backend, bool quiet) {
  if (kind == "auto" && backend.kind() == BackendKind::cpu && !quiet)
    std::fprintf(stderr, "attnbench: no CUDA device found; running on the CPU reference backend (its times are CPU times, not GPU times)\n");
}

}  // namespace ab

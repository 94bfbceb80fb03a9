// CUDA device discovery and the device description recorded in reports.
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/nvml_clock.hpp"

#include <cuda_runtime.h>

#include <fmt/format.h>

#include "backends/cuda/cuda_check.hpp"

namespace ab::cuda {

int device_count_noexcept() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

namespace {
std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }
int attr(cudaDeviceAttr a, int device) {
  int v = 0;
  AB_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
  return v;
}
}  // namespace

DeviceInfo query_device_info(int device) {
  DeviceInfo d;
  d.backend = "cuda";
  cudaDeviceProp prop{};
  AB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.l2_bytes = prop.l2CacheSize;
  d.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  std::size_t free_b = 0, total_b = 0;
  int current = 0;
  AB_CUDA_CHECK(cudaGetDevice(&current));
  if (current == device && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
    d.memory_free = static_cast<std::int64_t>(free_b);
    d.memory_bytes = static_cast<std::int64_t>(total_b);
  } else {
    (void)cudaGetLastError();
  }
  int drv = 0, rt = 0;
  AB_CUDA_CHECK(cudaDriverGetVersion(&drv));
  AB_CUDA_CHECK(cudaRuntimeGetVersion(&rt));
  // The display driver ("580.159.04") identifies the environment; the CUDA driver API version follows it.
  std::string display = nvml_driver_version();
  d.driver = display.empty() ? version_text(drv) : fmt::format("{} (CUDA {})", display, version_text(drv));
  d.cuda_runtime = version_text(rt);
  std::size_t lt = cublasLtGetVersion();  // e.g. 130100 = 13.1.0
  d.cublaslt = fmt::format("{}.{}.{}", lt / 10000, (lt % 10000) / 100, lt % 100);
  d.clock_mhz_max = attr(cudaDevAttrClockRate, device) / 1000;      // kHz
  d.mem_clock_mhz = attr(cudaDevAttrMemoryClockRate, device) / 1000;
  return d;
}

}  // namespace ab::cuda

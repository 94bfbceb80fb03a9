// NVML through dlopen("libnvidia-ml.so.1"): init once, find the CUDA device by PCI bus id, read clocks
// and the driver version.
#include "backends/cuda/nvml_clock.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

namespace ab::cuda {

namespace {

using nvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using nvmlDevice = void*;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

struct Nvml {
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*by_pci)(const char*, nvmlDevice*) = nullptr;
  nvmlReturn (*clock)(nvmlDevice, int, unsigned int*) = nullptr;
  nvmlReturn (*driver_version)(char*, unsigned int) = nullptr;
  bool ok = false;
};

const Nvml& nvml() {
  static Nvml n;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    n.init = reinterpret_cast<nvmlReturn (*)()>(dlsym(lib, "nvmlInit_v2"));
    n.by_pci = reinterpret_cast<nvmlReturn (*)(const char*, nvmlDevice*)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.clock = reinterpret_cast<nvmlReturn (*)(nvmlDevice, int, unsigned int*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    n.driver_version = reinterpret_cast<nvmlReturn (*)(char*, unsigned int)>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    n.ok = n.init && n.by_pci && n.clock && n.init() == 0;
  });
  return n;
}

}  // namespace

NvmlClock::NvmlClock(int cuda_device) {
  const Nvml& n = nvml();
  if (!n.ok) return;
  char bus[64] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  nvmlDevice dev = nullptr;
  if (n.by_pci(bus, &dev) == 0) device_ = dev;
}

int NvmlClock::sm_clock_mhz() const {
  if (!device_) return 0;
  unsigned int mhz = 0;
  if (nvml().clock(device_, kNvmlClockSm, &mhz) != 0) return 0;
  return static_cast<int>(mhz);
}

std::string nvml_driver_version() {
  const Nvml& n = nvml();
  if (!n.ok || !n.driver_version) return "";
  char buf[96] = {0};
  if (n.driver_version(buf, sizeof buf) != 0) return "";
  return buf;
}

}  // namespace ab::cuda

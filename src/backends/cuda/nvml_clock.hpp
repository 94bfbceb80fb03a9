// The current SM clock through NVML, loaded with dlopen so the build needs no NVML; 0 when unavailable.
#pragma once
#include <string>

namespace ab::cuda {

class NvmlClock {
 public:
  explicit NvmlClock(int cuda_device);
  // Current SM clock in MHz, 0 when NVML or the device cannot be read.
  int sm_clock_mhz() const;

 private:
  void* device_ = nullptr;  // nvmlDevice_t
};

// The display driver's version ("580.159.04"), "" when NVML is unavailable.
std::string nvml_driver_version();

}  // namespace ab::cuda

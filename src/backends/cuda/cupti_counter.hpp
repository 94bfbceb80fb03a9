// Kernel launch counting with the CUPTI activity API (CONCURRENT_KERNEL records): which kernels really
// ran in a window, how many times, and their summed durations.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ab::cuda {

struct KernelWindow {
  bool available = false;
  std::string error;                     // why CUPTI could not count, when !available
  std::int64_t kernels = 0;
  std::vector<std::string> names;        // distinct names in order of first launch, "name x3"
  std::vector<double> name_time_ms;      // summed duration of each entry of `names`
  double kernel_time_ms = 0;             // summed (end - start) of the records
  std::int64_t dropped = 0;              // records CUPTI reported dropped
};

class CuptiCounter {
 public:
  // Registers the buffer callbacks once per process; never throws.
  CuptiCounter();
  bool available() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // Drains stale records and enables kernel activity records.
  void begin();
  // Call after the device work of the window is synchronized: flushes, disables and returns the window.
  KernelWindow end();

 private:
  std::string error_;
  bool enabled_ = false;
};

// "void ns::kern<float>(Params)" -> "ns::kern<float>" (demangled, no return type or parameters).
std::string readable_kernel_name(const char* raw);

}  // namespace ab::cuda

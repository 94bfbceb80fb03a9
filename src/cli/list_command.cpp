// `attnbench list`: the strategies with their launch contracts, the backends, and the visible devices.
#include <cstdio>

#include <fmt/format.h>

#include "cli/backend_factory.hpp"
#include "cli/list_command.hpp"
#include "core/strategy.hpp"
#include "strategies/registry.hpp"

namespace ab {

int list_command() {
  Problem example = make_problem(32, 12, 512, 64, 8, 0, KvLayout::contiguous, DType::fp16, false);
  fmt::print("strategies (launches per forward; example B=32 H=12 P=8):\n");
  for (const auto& s : make_all_strategies()) {
    LaunchContract c = s->contract(example);
    fmt::print("  {:<14} {:<58} {} -> {} launches\n", s->name(), s->description(), c.formula, c.total());
  }
  fmt::print("backends:\n");
  fmt::print("  {:<14} {}\n", "cpu", "reference, fp64 accumulation, always available (times are CPU times)");
  if (cuda_backend_built())
    fmt::print("  {:<14} {}\n", "cuda", "cuBLASLt + kernels/, CUDA events, CUPTI, NVTX");
  else
    fmt::print("  {:<14} {}\n", "cuda", "not built (configure with -DATTNBENCH_CUDA=ON)");
  fmt::print("devices:\n");
  int n = visible_cuda_devices();
  if (n == 0) fmt::print("  none (no CUDA device visible; runs use the CPU backend)\n");
  for (int i = 0; i < n; ++i) {
    try {
      auto be = make_backend("cuda", i);
      DeviceInfo d = be->device_info();
      fmt::print("  cuda:{}  {}  cc {}.{}  {} SMs  {:.1f} GiB\n", i, d.name, d.cc_major, d.cc_minor, d.sm_count,
                 d.memory_bytes / 1073741824.0);
    } catch (const std::exception& e) {
      fmt::print("  cuda:{}  unavailable: {}\n", i, e.what());
    }
  }
  return 0;
}

}  // namespace ab

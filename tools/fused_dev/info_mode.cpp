// fused_dev info: the device and every compiled kernel instantiation with its resource use.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "fused_attention.hpp"
#include "fused_dev_hooks.cuh"
#include "modes.hpp"

namespace ab::fused_dev {

int run_info() {
  const DeviceInfo dev = cuda::query_device_info(0);
  int smem_optin = 0;
  AB_CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  std::printf("device: %s, cc %d.%d, %d SMs, L2 %lld MB, smem/block optin %d KB\n", dev.name.c_str(), dev.cc_major,
              dev.cc_minor, dev.sm_count, static_cast<long long>(dev.l2_bytes >> 20), smem_optin >> 10);
  std::printf("compiled tiles (default first):");
  for (const FusedTile& t : kernels::fused_compiled_tiles()) std::printf(" %s", t.name().c_str());
  std::printf("\n%-5s %-14s %-5s %-8s %6s %6s %6s %5s\n", "D", "tile", "dtype", "kernel", "smemKB", "regs", "local",
              "Qreg");
  for (const auto& i : kernels::fused_kernel_infos()) {
    const FusedTile& t = i.tile;
    std::printf("%-5d %-14s %-5s %-8s %6.1f %6d %6d %5s\n", i.head_dim, t.name().c_str(), i.bf16 ? "bf16" : "fp16",
                t.persistent() ? "wgmma-wsp" : t.ws() ? "wgmma-ws" : t.wgmma() ? "wgmma" : "mma.sync", i.smem_bytes / 1024.0, i.regs, i.local_bytes,
                i.q_in_regs ? "yes" : "no");
  }
  return 0;
}

}  // namespace ab::fused_dev

// Development harness of the fused attention kernels (kernels/fused_attention*.cu), built by CMake as
// attnbench_fused_dev (binary fused_dev) and driven by scripts/fused-dev.sh. Modes:
//   fused_dev version              exit 0 (the script's "does the prebuilt binary run here" probe)
//   fused_dev info                 compiled kernels with registers / spills / shared memory
//   fused_dev check                every compiled tile on awkward shapes against the CPU fp64 reference;
//                                  exit 1 on any failure
//   fused_dev bench [csv]          CUDA-event timing of every compiled tile at the target shapes (L2
//                                  flushed before every sample, the tiles' samples interleaved), rows
//                                  appended to csv
//   fused_dev soak                 every tile launched 2000 times on one shape (FUSED_DEV_SOAK) under a host
//                                  watchdog: exit 4 on a launch that does not finish in 10 s, 3 when no
//                                  tile of the family implements the shape on this device
//   fused_dev ctas                 per-CTA start and end times of the persistent tiles on the six target rows
//                                  (FUSED_DEV_CTAS=B,H,S,D,CAUSAL: one other shape; FUSED_DEV_CTAS_RAW=path:
//                                  every launch's per-CTA record as CSV); needs a build with
//                                  -DATTNBENCH_CTA_TIMES=ON, exit 3 without it
//   fused_dev one D BM BN WARPS STAGES CAUSAL [ws|wsp]   two launches of one tile at the target shape for D
//                                  (ws: the warp-specialized tile of that geometry, wsp: its persistent variant)
// FUSED_DEV_FAMILY=wg|mma|wsp|all picks the tiles of check, bench (default all; another value: one line, exit 2);
// FUSED_DEV_TILES=a,b benches only the tiles of those names.
// Exit 2 on a device error or bad arguments, 3 without a CUDA device.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "backends/cuda/cuda_device.hpp"
#include "core/errors.hpp"
#include "modes.hpp"

namespace {

constexpr const char* kUsage = "usage: fused_dev version|info|check|bench [csv]|soak|ctas|one D BM BN WARPS STAGES CAUSAL [ws|wsp]\n";

ab::fused_dev::TileSelection family_from_environment() {
  const char* f = std::getenv("FUSED_DEV_FAMILY");
  if (!f) return ab::fused_dev::TileSelection::all;
  const auto family = ab::fused_dev::parse_tile_selection(f);
  if (!family) throw ab::UsageError(std::string("FUSED_DEV_FAMILY must be wg, mma, wsp or all, got '") + f + "'");
  return *family;
}

int run_mode(const std::string& mode, ab::fused_dev::TileSelection family, int argc, char** argv) {
  using namespace ab::fused_dev;
  if (mode == "info") return run_info();
  if (mode == "check") return run_checks(family);
  if (mode == "bench") return run_bench(family, argc > 2 ? argv[2] : "");
  if (mode == "soak") return run_soak(family);
  if (mode == "ctas") return run_ctas(family);
  if (mode == "one" && argc >= 8) {
    const std::string variant = argc > 8 ? argv[8] : "";
    const ab::FusedTile t = ab::FusedTile::prefill_tile(
        std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]), std::atoi(argv[6]),
        variant == "wsp" ? ab::TileFamily::prefill_wsp : variant == "ws" ? ab::TileFamily::prefill_ws : ab::TileFamily::prefill);
    return run_one(std::atoi(argv[2]), t, std::atoi(argv[7]) != 0);
  }
  std::fputs(kUsage, stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  ab::fused_dev::TileSelection family;
  try {
    family = family_from_environment();
  } catch (const ab::UsageError& e) {
    std::fprintf(stderr, "fused_dev: %s\n", e.what());
    return 2;
  }
  if (ab::cuda::device_count_noexcept() == 0) {
    std::printf("no CUDA device\n");
    return mode == "version" ? 0 : 3;
  }
  if (mode == "version") return 0;
  try {
    return run_mode(mode, family, argc, argv);
  } catch (const ab::BackendError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "CUDA error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "fused_dev: %s\n", e.what());
  }
  return 2;
}

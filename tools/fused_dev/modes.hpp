// The harness's modes (fused_dev_main.cpp dispatches). Each returns the process exit code and throws
// BackendError on device failures.
#pragma once
#include <string>

#include "core/backend.hpp"
#include "tile_selection.hpp"

namespace ab::fused_dev {

// The width of the shape column in check's and bench's lines.
inline constexpr int kLabelWidth = 52;

// Device, compiled tiles, and every kernel instantiation's registers / spills / shared memory.
int run_info();
// Every tile of `family` on check_problems() against the fp64 reference; 1 on any failure.
int run_checks(TileSelection family);
// Every tile of `family` timed at the target shapes; rows appended to `csv_path` when not empty.
int run_bench(TileSelection family, const std::string& csv_path);
// Two launches of `tile` at the target shape for `head_dim` (for a profiler: skip one, profile one).
int run_one(int head_dim, const FusedTile& tile, bool causal);
// Every tile of `family` launched many times on one shape under a host watchdog; 4 on a hang (soak_mode.cpp).
int run_soak(TileSelection family);
// How evenly the persistent tiles' CTAs share the work (a -DATTNBENCH_CTA_TIMES=ON build; 3 otherwise).
int run_ctas(TileSelection family);

}  // namespace ab::fused_dev

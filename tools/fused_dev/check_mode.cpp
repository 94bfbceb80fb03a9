// fused_dev check: every compiled tile of a family on the awkward shapes against the CPU fp64 reference
// (core/reference.hpp). O is poisoned with NaN before each launch, the pool rows past seq_len hold NaN,
// and every launch runs twice and must match bit for bit; a persistent tile also on 1 and 3 CTAs.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.hpp"
#include "dev_case.hpp"
#include "dev_inputs.hpp"
#include "device_case.hpp"
#include "fused_attention.hpp"
#include "fused_dev_hooks.cuh"
#include "modes.hpp"

namespace ab::fused_dev {

namespace {

// Launches `tile` on a poisoned O and returns O; the launch's error code in *rc (0: success).
std::vector<std::uint16_t> launch_once(DeviceCase& d, const FusedTile& tile, int* rc) {
  d.poison_output();
  *rc = kernels::fused_launch(d.params(), tile, nullptr);
  if (*rc != 0) return {};
  AB_CUDA_CHECK(cudaDeviceSynchronize());
  return d.download_output();
}

std::int64_t count_differences(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

// Whether the tile's kernel for this head_dim and dtype may split its last round (FusedKernelInfo).
bool splits_tail(const FusedTile& t, const Problem& p) {
  static const std::vector<kernels::FusedKernelInfo> infos = kernels::fused_kernel_infos();
  for (const kernels::FusedKernelInfo& i : infos)
    if (i.head_dim == p.head_dim && i.tile == t && i.bf16 == (p.dtype == DType::bf16))
      return i.tail_split;
  return false;
}

// A persistent tile ("...wsp") again on a grid capped at 1, 3 and 7 CTAs, so each CTA walks many work items
// (Q buffers and ring phases carried across items), each grid twice: the same bits both times, and O matches
// the full grid's bit for bit. A tile that may split its last round does so here at a gain of 2 key tiles
// (fused_set_tail_min_gain), so that these small problems split: the grids split differently and their sums
// round differently, so O must be within the tolerance of the fp64 reference instead. Returns the number of
// failures.
int check_few_ctas(DeviceCase& d, const FusedTile& t, const Problem& p, const std::vector<std::uint16_t>& full_grid,
                   const std::vector<double>& ref, const std::string& label) {
  const bool tail = splits_tail(t, p);
  int failures = 0;
  kernels::fused_set_tail_min_gain(tail ? 2 : 0);
  for (int ctas : {1, 3, 7}) {
    kernels::fused_set_persistent_grid_cap(ctas);
    int rc = 0, rc2 = 0;
    const std::vector<std::uint16_t> out = launch_once(d, t, &rc);
    const std::vector<std::uint16_t> again = rc == 0 ? launch_once(d, t, &rc2) : out;
    kernels::fused_set_persistent_grid_cap(0);
    const bool launched = rc == 0 && rc2 == 0;
    const std::int64_t differ = launched ? count_differences(out, full_grid) : -1;
    const std::int64_t repeat = launched ? count_differences(out, again) : -1;
    const ErrorStats e = launched ? compare_output(p, out.data(), ref.data()) : ErrorStats{};
    const bool close = e.nonfinite == 0 && e.rel_l2 < dev_tolerance(p.dtype);
    const bool ok = launched && repeat == 0 && (tail ? close : differ == 0);
    failures += ok ? 0 : 1;
    std::printf("%s %-*s %-12s on %d CTA(s): launch %d/%d, run-to-run diffs %lld, diffs from the full grid %lld%s, "
                "rel_l2 %.3e\n",
                ok ? "ok  " : "FAIL", kLabelWidth, label.c_str(), t.name().c_str(), ctas, rc, rc2,
                static_cast<long long>(repeat), static_cast<long long>(differ), tail ? " (tail split)" : "", e.rel_l2);
  }
  kernels::fused_set_tail_min_gain(0);
  return failures;
}

// The refusals the kernels must give; returns how many did not happen.
int check_refusals(const FusedTile& some_tile) {
  int missing = 0;
  auto expect_refused = [&](const char* what, const kernels::FusedParams& p, const FusedTile& t) {
    const std::string why = kernels::fused_can_implement(p, t);
    std::printf("refusal %s: %s\n", what, why.c_str());
    if (why.empty()) ++missing;
  };
  kernels::FusedParams p;
  p.batch = 1;
  p.heads = 1;
  p.seq_len = 100;
  p.head_dim = 80;
  expect_refused("head_dim 80", p, some_tile);
  p.head_dim = 64;
  p.paged = true;
  p.page_size = 10;
  p.pages = 5;
  expect_refused("pages*page_size < seq_len", p, some_tile);
  FusedTile bogus;
  bogus.block_m = 96;
  expect_refused("tile m96n64w4s2", p, bogus);
  return missing;
}

}  // namespace

int run_checks(TileSelection family) {
  const std::vector<FusedTile> tiles = tiles_of_selection(kernels::fused_compiled_tiles(), family);
  int failures = 0, runs = 0;
  double worst_fp16 = 0, worst_bf16 = 0;
  std::uint64_t seed = 1234;
  for (const Problem& p : check_problems()) {
    const HostTensors h = make_dev_inputs(p, ++seed);
    DeviceCase d(p, h);
    const std::string label = p.label();
    // A tile that refuses must say why; shown for the 128x128 tiles, the defaults' shape.
    for (const FusedTile& t : tiles) {
      const std::string why = kernels::fused_can_implement(d.params(), t);
      if (!why.empty() && t.block_m == 128 && t.block_n == 128)
        std::printf("     %-*s %-12s refused: %s\n", kLabelWidth, label.c_str(), t.name().c_str(), why.c_str());
    }
    // No fp64 reference where no tile of the family takes the problem (a narrow family, such as wsp).
    const bool any_takes = std::any_of(tiles.begin(), tiles.end(), [&](const FusedTile& t) {
      return kernels::fused_can_implement(d.params(), t).empty();
    });
    if (!any_takes) continue;
    std::vector<double> ref(static_cast<std::size_t>(p.q_elements()));
    reference_attention_fp64(p, h.q.data(), h.k.data(), h.v.data(), h.block_table.data(), ref.data());
    for (const FusedTile& t : tiles) {
      if (!kernels::fused_can_implement(d.params(), t).empty()) continue;
      int rc = 0;
      const std::vector<std::uint16_t> out = launch_once(d, t, &rc);
      if (rc != 0) {
        std::printf("FAIL %-*s %-12s launch returned %d (%s)\n", kLabelWidth, label.c_str(), t.name().c_str(), rc,
                    cudaGetErrorString(static_cast<cudaError_t>(rc)));
        ++failures;
        continue;
      }
      const std::vector<std::uint16_t> again = launch_once(d, t, &rc);
      cuda::check_launch(rc, "fused_attention (repeat)");
      const ErrorStats e = compare_output(p, out.data(), ref.data());
      const std::int64_t differ = count_differences(out, again);
      const bool ok = e.nonfinite == 0 && differ == 0 && e.rel_l2 < dev_tolerance(p.dtype);
      ++runs;
      double& worst = p.dtype == DType::bf16 ? worst_bf16 : worst_fp16;
      worst = std::max(worst, e.rel_l2);
      if (!ok) ++failures;
      std::printf("%s %-*s %-12s rel_l2 %.3e max_abs %.3e nonfinite %lld run-to-run-diffs %lld\n", ok ? "ok  " : "FAIL",
                  kLabelWidth, label.c_str(), t.name().c_str(), e.rel_l2, e.max_abs,
                  static_cast<long long>(e.nonfinite), static_cast<long long>(differ));
      if (t.persistent()) failures += check_few_ctas(d, t, p, out, ref, label);
    }
  }
  if (tiles.empty()) {
    std::printf("no compiled tiles in family %s\n", tile_selection_name(family));
    ++failures;
  } else {
    failures += check_refusals(tiles.front());
  }
  std::printf("CHECK SUMMARY (%s tiles): %d launches checked, %d failures; worst rel_l2 fp16 %.3e (tol %.0e), bf16 "
              "%.3e (tol %.0e)\n",
              tile_selection_name(family), runs, failures, worst_fp16, dev_tolerance(DType::fp16), worst_bf16,
              dev_tolerance(DType::bf16));
  if (failures) std::printf("CHECK FAILED\n");
  return failures ? 1 : 0;
}

}  // namespace ab::fused_dev

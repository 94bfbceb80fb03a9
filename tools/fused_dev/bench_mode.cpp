// fused_dev bench and fused_dev one: every tile of a family (FUSED_DEV_TILES: only those named) timed at the
// target shapes, their samples interleaved (the first implementable tile as a second series too, the noise
// floor), the default tile on paged K/V; CSV rows
// kind,name,B,H,S,D,causal,layout,median_ms,p10_ms,p90_ms,tflops,device (ratio_table.py reads them).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "core/text_split.hpp"
#include "csv_file.hpp"
#include "dev_case.hpp"
#include "dev_inputs.hpp"
#include "device_case.hpp"
#include "fused_attention.hpp"
#include "launch_timing.hpp"
#include "modes.hpp"

namespace ab::fused_dev {

namespace {

constexpr int kWarmup = 10;

struct TargetShape {
  int batch, heads, seq_len, head_dim, samples;
};
// The target shapes: the default one, the middle D=128 one and the long D=128 one.
constexpr TargetShape kTargets[] = {{32, 12, 512, 64, 200}, {8, 16, 2048, 128, 100}, {2, 16, 8192, 128, 40}};

// Prints one timed row and appends it to the CSV (layout: "contiguous", "paged", "paged16"...).
void print_row(const Problem& p, const SampleSummary& s, const std::string& tile_label, const std::string& layout,
               const std::string& device, FILE* csv) {
  const double tflops = p.flops() / s.median * 1e-9;
  std::printf("%-*s %-12s %9.4f %9.4f %9.4f %8.1f\n", kLabelWidth, p.label().c_str(), tile_label.c_str(), s.median,
              s.p10, s.p90, tflops);
  if (csv)
    std::fprintf(csv, "fused,%s,%lld,%lld,%lld,%lld,%d,%s,%.5f,%.5f,%.5f,%.2f,%s\n", tile_label.c_str(),
                 static_cast<long long>(p.batch), static_cast<long long>(p.heads), static_cast<long long>(p.seq_len),
                 static_cast<long long>(p.head_dim), p.causal ? 1 : 0, layout.c_str(), s.median, s.p10, s.p90, tflops,
                 device.c_str());
}

}  // namespace

int run_bench(TileSelection family, const std::string& csv_path) {
  const std::string device = cuda::query_device_info(0).name;
  CsvFile csv(csv_path);
  if (!csv_path.empty() && !csv.f) {
    std::fprintf(stderr, "cannot open %s for appending\n", csv_path.c_str());
    return 2;
  }
  cuda::L2Flusher flusher;
  flusher.init(kFlushBytes / 2);
  std::vector<FusedTile> tiles = tiles_of_selection(kernels::fused_compiled_tiles(), family);
  if (const char* only = std::getenv("FUSED_DEV_TILES")) {  // a comma-separated list of tile names
    const std::vector<std::string> names = split_text(only, ',');
    auto unnamed = [&](const FusedTile& t) { return std::find(names.begin(), names.end(), t.name()) == names.end(); };
    tiles.erase(std::remove_if(tiles.begin(), tiles.end(), unnamed), tiles.end());
  }
  std::printf("device: %s\n", device.c_str());
  std::printf("%-*s %-12s %9s %9s %9s %8s\n", kLabelWidth, "shape", "tile", "median_ms", "p10_ms", "p90_ms", "TFLOP/s");
  for (const TargetShape& s : kTargets)
    for (bool causal : {false, true}) {
      const Problem p = dev_problem(s.batch, s.heads, s.seq_len, s.head_dim, 0, causal, DType::fp16);
      const DeviceCase d(p, make_dev_inputs(p, 99));
      // Every implementable tile and the first one (the default) a second time, their samples interleaved:
      // the spread between the first tile's two series is the noise floor.
      std::vector<const FusedTile*> run;
      for (const FusedTile& t : tiles)
        if (kernels::fused_can_implement(d.params(), t).empty()) run.push_back(&t);
      if (run.empty()) continue;
      run.push_back(run.front());
      std::vector<std::function<void()>> launches;
      for (const FusedTile* t : run) launches.push_back([&d, t] { d.launch(*t); });
      const std::vector<SampleSummary> sums = time_launches_interleaved(launches, flusher, kWarmup, s.samples);
      for (std::size_t k = 0; k < run.size(); ++k)
        print_row(p, sums[k], run[k]->name() + (k + 1 == run.size() ? "(again)" : ""), "contiguous", device, csv.f);
    }
  // Paged K/V at the default shape, default tile: the block-table path's cost.
  for (int page_size : {16, 128})
    for (bool causal : {false, true}) {
      const Problem p = dev_problem(32, 12, 512, 64, page_size, causal, DType::fp16);
      const DeviceCase d(p, make_dev_inputs(p, 7));
      for (const FusedTile& t : tiles) {
        if (!kernels::fused_can_implement(d.params(), t).empty()) continue;
        print_row(p, time_launch([&] { d.launch(t); }, flusher, kWarmup, 100), t.name(), "paged" + std::to_string(page_size),
                  device, csv.f);
        break;  // default tile only
      }
    }
  return 0;
}

int run_one(int head_dim, const FusedTile& tile, bool causal) {
  Problem p = head_dim == 128 ? dev_problem(2, 16, 8192, 128, 0, causal, DType::fp16)
                              : dev_problem(32, 12, 512, head_dim, 0, causal, DType::fp16);
  // FUSED_DEV_ONE_SHAPE=B,H,S: a small shape instead (compute-sanitizer runs).
  if (const char* shape = std::getenv("FUSED_DEV_ONE_SHAPE")) {
    int b = 0, h = 0, s = 0;
    if (std::sscanf(shape, "%d,%d,%d", &b, &h, &s) != 3 || b < 1 || h < 1 || s < 1) {
      std::fprintf(stderr, "FUSED_DEV_ONE_SHAPE must be B,H,S (positive), got '%s'\n", shape);
      return 2;
    }
    p = dev_problem(b, h, s, head_dim, 0, causal, DType::fp16);
  }
  const DeviceCase d(p, make_dev_inputs(p, 3));
  const std::string why = kernels::fused_can_implement(d.params(), tile);
  if (!why.empty()) {
    std::printf("%s: %s\n", tile.name().c_str(), why.c_str());
    return 1;
  }
  for (int i = 0; i < 2; ++i) d.launch(tile);
  AB_CUDA_CHECK(cudaDeviceSynchronize());
  std::printf("%s %s: 2 launches\n", p.label().c_str(), tile.name().c_str());
  return 0;
}

}  // namespace ab::fused_dev

// fused_dev ctas: how evenly the persistent grid's CTAs share the work. Needs the kernels built with
// -DATTNBENCH_CTA_TIMES=ON (each CTA records its start and its consumer warpgroups' ends, fused_cta_times.cuh);
// exit 3 otherwise. For every persistent tile of the six rows (fp16, contiguous; FUSED_DEV_CTAS=
// B,H,S,D,CAUSAL for one other shape), 12 launches with the L2 flushed before each; of the launch with the
// median span it prints the span (first start to last end), the CTAs' busy times (mean, max, max / mean),
// when they end (10th, 50th, 90th percentile after the first start), the idle share of grid x span and
// the last CTA's start. FUSED_DEV_CTAS_RAW=path appends every timed launch's record to a CSV (shape, tile,
// launch, CTA, then its start and its consumer warpgroups' ends in ns after the launch's first start), for a
// fit of each block's cost to the CTAs' busy times.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/l2_flush.hpp"
#include "csv_file.hpp"
#include "cta_balance.hpp"
#include "dev_case.hpp"
#include "dev_inputs.hpp"
#include "device_case.hpp"
#include "fused_attention.hpp"
#include "fused_dev_hooks.cuh"
#include "launch_timing.hpp"
#include "modes.hpp"

namespace ab::fused_dev {

namespace {

constexpr int kMaxCtas = 4096;  // the record's room: the grid is at most one CTA per SM
constexpr int kCtaLaunches = 12, kCtaWarmup = 3;

struct CtaShape {
  int batch, heads, seq_len, head_dim, causal;
};
constexpr CtaShape kSixRows[] = {{32, 12, 512, 64, 0},  {32, 12, 512, 64, 1},  {8, 16, 2048, 128, 0},
                                 {8, 16, 2048, 128, 1}, {2, 16, 8192, 128, 0}, {2, 16, 8192, 128, 1}};

// One launch's record as CSV rows: label, tile, launch, CTA, start, warpgroup ends (ns after the first start;
// -1 where nothing was recorded). False when the write failed.
bool append_raw(std::FILE* f, const std::string& label, const std::string& tile, int launch,
                const std::vector<std::uint64_t>& times, int slots) {
  std::uint64_t t0 = ~0ull;
  for (std::size_t c = 0; c < times.size(); c += static_cast<std::size_t>(slots))
    if (times[c] != 0) t0 = std::min(t0, times[c]);
  for (std::size_t c = 0; c + static_cast<std::size_t>(slots) <= times.size(); c += static_cast<std::size_t>(slots)) {
    if (times[c] == 0) continue;
    std::fprintf(f, "%s,%s,%d,%zu", label.c_str(), tile.c_str(), launch, c / static_cast<std::size_t>(slots));
    for (int s = 0; s < slots; ++s) {
      const std::uint64_t v = times[c + static_cast<std::size_t>(s)];
      std::fprintf(f, ",%lld", v == 0 ? -1ll : static_cast<long long>(v - t0));
    }
    std::fputc('\n', f);
  }
  return std::ferror(f) == 0;
}

}  // namespace

int run_ctas(TileSelection family) {
  std::vector<CtaShape> shapes(std::begin(kSixRows), std::end(kSixRows));
  if (const char* env = std::getenv("FUSED_DEV_CTAS")) {
    CtaShape s{};
    if (std::sscanf(env, "%d,%d,%d,%d,%d", &s.batch, &s.heads, &s.seq_len, &s.head_dim, &s.causal) != 5 ||
        s.batch < 1 || s.heads < 1 || s.seq_len < 1 || s.head_dim < 1) {
      std::fprintf(stderr, "FUSED_DEV_CTAS must be B,H,S,D,CAUSAL (positive), got '%s'\n", env);
      return 2;
    }
    shapes.assign(1, s);
  }
  int sms = 0;
  AB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (sms > kMaxCtas) {
    std::fprintf(stderr, "fused_dev ctas: %d SMs, the record has room for %d CTAs\n", sms, kMaxCtas);
    return 2;
  }
  unsigned long long* times = nullptr;
  const std::size_t bytes = sizeof(unsigned long long) * kernels::kCtaTimeSlots * kMaxCtas;
  AB_CUDA_CHECK(cudaMalloc(&times, bytes));
  if (!kernels::fused_set_cta_times(times)) {
    AB_CUDA_CHECK(cudaFree(times));
    std::printf("the kernels were built without -DATTNBENCH_CTA_TIMES=ON: nothing to record\n");
    return 3;
  }
  cuda::L2Flusher flusher;
  flusher.init(kFlushBytes / 2);
  std::vector<std::uint64_t> host(static_cast<std::size_t>(kernels::kCtaTimeSlots) * kMaxCtas);
  const char* raw_env = std::getenv("FUSED_DEV_CTAS_RAW");
  const std::string raw_path = raw_env ? raw_env : "";
  const CsvFile raw(raw_path);
  if (!raw_path.empty() && !raw.f) {
    std::fprintf(stderr, "fused_dev ctas: cannot open %s\n", raw_path.c_str());
    AB_CUDA_CHECK(cudaFree(times));
    return 2;
  }
  std::printf("%-*s %-20s %5s %9s %9s %9s %6s %8s %8s %8s %6s %9s\n", kLabelWidth, "shape", "tile", "ctas", "span_us",
              "busy_avg", "busy_max", "max/av", "end_p10", "end_p50", "end_p90", "idle", "start_max");
  for (const CtaShape& s : shapes) {
    const Problem p = dev_problem(s.batch, s.heads, s.seq_len, s.head_dim, 0, s.causal != 0, DType::fp16);
    const DeviceCase d(p, make_dev_inputs(p, 11));
    for (const FusedTile& t : tiles_of_selection(kernels::fused_compiled_tiles(), family)) {
      if (!t.persistent() || !kernels::fused_can_implement(d.params(), t).empty()) continue;
      std::vector<CtaBalance> runs;
      for (int i = 0; i < kCtaWarmup + kCtaLaunches; ++i) {
        AB_CUDA_CHECK(cudaMemset(times, 0, bytes));
        flusher.flush(nullptr);
        d.launch(t);
        AB_CUDA_CHECK(cudaMemcpy(host.data(), times, bytes, cudaMemcpyDeviceToHost));
        if (i < kCtaWarmup) continue;
        runs.push_back(cta_balance(host, kernels::kCtaTimeSlots));
        if (raw.f && !append_raw(raw.f, p.label(), t.name(), i - kCtaWarmup, host, kernels::kCtaTimeSlots)) {
          std::fprintf(stderr, "fused_dev ctas: cannot write %s\n", raw_path.c_str());
          return 2;
        }
      }
      std::sort(runs.begin(), runs.end(), [](const CtaBalance& a, const CtaBalance& b) { return a.span < b.span; });
      const CtaBalance& m = runs[runs.size() / 2];
      if (m.missing > 0 || m.ctas == 0) {
        std::fprintf(stderr, "%s %s: %d CTAs recorded a start but no end\n", p.label().c_str(), t.name().c_str(),
                     m.missing);
        return 1;
      }
      std::printf("%-*s %-20s %5d %9.2f %9.2f %9.2f %6.3f %8.2f %8.2f %8.2f %5.1f%% %9.2f\n", kLabelWidth, p.label().c_str(),
                  t.name().c_str(), m.ctas, m.span, m.busy_mean, m.busy_max, m.busy_max / m.busy_mean, m.end_p10,
                  m.end_p50, m.end_p90, 100.0 * m.idle, m.start_max);
      std::fflush(stdout);
    }
  }
  kernels::fused_set_cta_times(nullptr);
  AB_CUDA_CHECK(cudaFree(times));
  return 0;
}

}  // namespace ab::fused_dev

// The dry run's time model (run/run_estimate.hpp). Rates are nominal where the device does not measure them;
// the CPU's was fitted to the default CPU problem on a 2-core machine (about 2 GFLOP/s: 1 per core).
#include "run/run_estimate.hpp"

#include <algorithm>
#include <cmath>

namespace ab {

namespace {

constexpr double kCpuFlopsPerCore = 1e9;        // the CPU backend's scalar fp64 loops
constexpr double kGpuComputeShare = 0.5;        // of the measured GEMM peak
constexpr double kGpuBandwidthShare = 0.7;      // of the measured copy bandwidth
constexpr double kNominalGpuPeakFlops = 4e14;   // when the peak was not measured
constexpr double kNominalGpuBandwidth = 2e12;
constexpr double kGpuSecondsPerLaunch = 6e-6;   // a launch in a loop of launches (nested: ~6 us each)
constexpr double kScoreBytesPerElement = 8;     // a materialised score matrix: written, read, written, read
constexpr double kRowSetupSeconds = 0.02;       // per row: workspace, plan, verification of its output

bool on_cpu(const DeviceInfo& dev) { return dev.backend == "cpu"; }

double cpu_flops(const DeviceInfo& dev) { return kCpuFlopsPerCore * std::max(1, dev.sm_count); }

double bandwidth(const DeviceInfo& dev) {
  return dev.copy_bandwidth_gbps > 0 ? dev.copy_bandwidth_gbps * 1e9 : kNominalGpuBandwidth;
}

double score_elements(const Problem& p) {
  return static_cast<double>(p.bh()) * static_cast<double>(p.q_len) * static_cast<double>(p.seq_len);
}

}  // namespace

RowEstimate estimate_row(const Problem& p, const LaunchContract& launches, bool fused, const DeviceInfo& dev,
                         const MeasureSettings& m) {
  const double bytes = p.bytes() + (fused ? 0.0 : kScoreBytesPerElement * score_elements(p));
  double forward = 0, flush = 0;
  if (on_cpu(dev)) {
    forward = p.flops() / cpu_flops(dev) + bytes / bandwidth(dev);
  } else {
    const double peak = dev.peak_tflops > 0 ? dev.peak_tflops * 1e12 : kNominalGpuPeakFlops;
    forward = std::max(p.flops() / (kGpuComputeShare * peak), bytes / (kGpuBandwidthShare * bandwidth(dev))) +
              static_cast<double>(launches.total()) * kGpuSecondsPerLaunch;
    flush = m.hot ? 0.0 : 2.0 * static_cast<double>(dev.l2_bytes) / bandwidth(dev);
  }
  const double per_sample = forward + flush;
  // Most rows meet the noise target at min_samples; a slow forward stops at the time budget (one sample at least).
  const double sampling = std::min(std::max(m.min_samples, 2) * per_sample, std::max(m.max_time_s, per_sample));
  const double warmup = warmup_forwards(m, forward) * forward;  // measure_forward's rule
  const double round = warmup + sampling;
  RowEstimate e;
  e.forward_s = forward;
  e.row_s = m.rounds * round + kRowSetupSeconds;
  e.longest_s = m.rounds * (warmup + std::max(m.max_time_s, per_sample) + per_sample) + kRowSetupSeconds;
  return e;
}

double estimate_reference_seconds(const Problem& p, const DeviceInfo& dev) {
  if (on_cpu(dev)) return p.flops() / cpu_flops(dev);
  return p.flops() / (0.05 * (dev.peak_tflops > 0 ? dev.peak_tflops * 1e12 : kNominalGpuPeakFlops));
}

double estimate_startup_seconds(const DeviceInfo& dev) { return on_cpu(dev) ? 0.6 : 2.0; }

ProblemEstimate estimate_problem(const Problem& p, const std::vector<std::unique_ptr<Strategy>>& strategies,
                                 Backend& backend, const RunOptions& opt, const DeviceInfo& dev) {
  ProblemEstimate e;
  e.seconds = e.longest_s = opt.verify ? estimate_reference_seconds(p, dev) : 0.0;
  for (const auto& s : strategies) {
    if (!s->can_run(p, backend, strategy_options(opt, *s)).empty()) continue;
    const LaunchContract c = s->contract(p, opt.strategy);
    const RowEstimate r = estimate_row(p, c, s->uses_fused_tile(), dev, opt.measure);
    e.seconds += r.row_s;
    e.longest_s += r.longest_s;
    e.launches += c.total();
    ++e.rows;
  }
  return e;
}

std::vector<std::size_t> longest_first(std::vector<std::size_t> items, const std::vector<double>& seconds) {
  auto cost = [&seconds](std::size_t i) { return i < seconds.size() ? seconds[i] : 0.0; };
  std::stable_sort(items.begin(), items.end(), [&](std::size_t a, std::size_t b) { return cost(a) > cost(b); });
  return items;
}

}  // namespace ab

// Combining a row's measurement rounds into its report fields, and the median's uncertainty.
#include "measure/rounds.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ab {

std::int64_t rounds_kept(std::int64_t rounds) { return (rounds + 3) / 4; }

namespace {
std::vector<double> fastest_kept(std::vector<double> medians) {
  std::sort(medians.begin(), medians.end());
  medians.resize(static_cast<std::size_t>(rounds_kept(static_cast<std::int64_t>(medians.size()))));
  return medians;
}
}  // namespace

double center_of_rounds(std::vector<double> medians) {
  if (medians.empty()) return NAN;
  std::vector<double> kept = fastest_kept(std::move(medians));
  double sum = 0;
  for (double x : kept) sum += x;
  return sum / static_cast<double>(kept.size());
}

double center_of_rounds_error(const std::vector<double>& medians) {
  std::vector<double> kept = fastest_kept(medians);
  if (kept.size() < 2) return NAN;
  return compute_stats(kept).noise / std::sqrt(static_cast<double>(kept.size()));
}

nlohmann::json rounds_to_json(const std::vector<Measurement>& rounds, const MeasureSettings& s, int max_clock_mhz) {
  if (rounds.empty()) throw std::invalid_argument("rounds_to_json: no rounds");
  std::vector<double> gpu, host_medians, medians, clocks;
  std::string stop = "noise";
  for (const Measurement& m : rounds) {
    gpu.insert(gpu.end(), m.samples.begin(), m.samples.end());
    medians.push_back(m.gpu.median);
    if (m.sm_clock_mhz > 0) clocks.push_back(m.sm_clock_mhz);
    if (stop == "noise" && m.stop_reason != "noise") stop = m.stop_reason;
  }
  Stats t = compute_stats(gpu);
  if (gpu.empty()) t = rounds.front().gpu;  // a Measurement made without its samples
  // Host time: every sample is not kept, so pool the rounds' statistics by their sample counts.
  Stats h = rounds.front().host;
  if (rounds.size() > 1) {
    double n = 0, sum = 0, sq = 0;
    h.min = INFINITY;
    h.max = -INFINITY;
    for (const Measurement& m : rounds) {
      double k = static_cast<double>(m.host.samples);
      n += k;
      sum += k * m.host.mean;
      sq += (k - 1) * m.host.stdev * m.host.stdev + k * m.host.mean * m.host.mean;
      h.min = std::min(h.min, m.host.min);
      h.max = std::max(h.max, m.host.max);
      host_medians.push_back(m.host.median);
    }
    h.samples = static_cast<std::int64_t>(n);
    h.mean = n > 0 ? sum / n : 0;
    h.stdev = n > 1 ? std::sqrt(std::max(0.0, (sq - n * h.mean * h.mean) / (n - 1))) : 0;
    h.noise = h.mean > 0 ? h.stdev / h.mean : 0;
    h.median = compute_stats(host_medians).median;
    t.median = center_of_rounds(medians);
  }
  int clock = static_cast<int>(compute_stats(clocks).median);  // 0 when none is known
  nlohmann::json j = {{"time_ms", t.to_json()},
                      {"host_ms", h.to_json()},
                      {"timer", rounds.front().timer},
                      {"stop_reason", stop},
                      {"noise_met", stop == "noise"},
                      {"sm_clock_mhz", clock},
                      {"clock_low", clock > 0 && max_clock_mhz > 0 && clock < kLowClockFraction * max_clock_mhz}};
  if (rounds.size() > 1) {
    Stats r = compute_stats(medians);
    j["rounds"] = {{"count", rounds.size()},
                   {"medians_ms", medians},
                   {"spread", r.noise},
                   {"kept", rounds_kept(static_cast<std::int64_t>(rounds.size()))},
                   {"error", center_of_rounds_error(medians)}};
  }
  if (s.keep_samples) j["samples_ms"] = gpu;
  return j;
}

}  // namespace ab

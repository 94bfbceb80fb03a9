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

RowTiming combine_rounds(const std::vector<Measurement>& rounds, const MeasureSettings& s, int max_clock_mhz) {
  if (rounds.empty()) throw std::invalid_argument("combine_rounds: no rounds");
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
  RowTiming out;
  out.time_ms = t;
  out.host_ms = h;
  out.timer = rounds.front().timer;
  out.stop_reason = stop;
  out.noise_met = stop == "noise";
  out.sm_clock_mhz = clock;
  out.clock_low = clock > 0 && max_clock_mhz > 0 && clock < kLowClockFraction * max_clock_mhz;
  if (rounds.size() > 1) {
    auto count = static_cast<std::int64_t>(rounds.size());
    out.rounds = RoundsSummary{count, medians, compute_stats(medians).noise, rounds_kept(count),
                               center_of_rounds_error(medians)};
  }
  if (s.keep_samples) out.samples_ms = std::move(gpu);
  return out;
}

nlohmann::json to_json(const RowTiming& t) {
  nlohmann::json j = {{"time_ms", t.time_ms.to_json()}, {"host_ms", t.host_ms.to_json()},
                      {"timer", t.timer},               {"stop_reason", t.stop_reason},
                      {"noise_met", t.noise_met.value_or(false)},       {"sm_clock_mhz", t.sm_clock_mhz},
                      {"clock_low", t.clock_low}};
  if (t.rounds)
    j["rounds"] = {{"count", t.rounds->count}, {"medians_ms", t.rounds->medians_ms}, {"spread", t.rounds->spread},
                   {"kept", t.rounds->kept},   {"error", t.rounds->error}};
  if (t.samples_ms) j["samples_ms"] = *t.samples_ms;
  return j;
}

nlohmann::json rounds_to_json(const std::vector<Measurement>& rounds, const MeasureSettings& s, int max_clock_mhz) {
  return to_json(combine_rounds(rounds, s, max_clock_mhz));
}

}  // namespace ab

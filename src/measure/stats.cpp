// Statistics over timing series: compute_stats, RunningStats and Stats' JSON form.
#include "measure/stats.hpp"

#include <algorithm>
#include <cmath>

#include "measure/measure.hpp"

namespace ab {

namespace {
double relative(double stdev, double mean) { return mean != 0 ? stdev / std::fabs(mean) : 0.0; }
// One sample has no spread to measure: its noise is unknown (NaN; null in JSON), never 0.
double noise_of(std::int64_t n, double stdev, double mean) { return n < 2 ? NAN : relative(stdev, mean); }
}  // namespace

void RunningStats::add(double x) {
  ++n_;
  double d = x - mean_;
  mean_ += d / static_cast<double>(n_);
  m2_ += d * (x - mean_);
}

double RunningStats::stdev() const {
  return n_ < 2 ? 0.0 : std::sqrt(std::max(0.0, m2_) / static_cast<double>(n_ - 1));
}

double RunningStats::noise() const { return noise_of(n_, stdev(), mean_); }

Stats compute_stats(const std::vector<double>& xs) {
  Stats s;
  if (xs.empty()) return s;
  std::vector<double> v(xs);
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.samples = static_cast<std::int64_t>(n);
  s.min = v.front();
  s.max = v.back();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(n);
  if (n >= 2) {
    double ss = 0;  // two-pass: exact enough for any series we time
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(ss / static_cast<double>(n - 1));
  }
  s.noise = noise_of(s.samples, s.stdev, s.mean);
  return s;
}

nlohmann::json Stats::to_json() const {
  return {{"median", median}, {"mean", mean}, {"min", min},         {"max", max},
          {"stdev", stdev},   {"noise", std::isnan(noise) ? nlohmann::json() : nlohmann::json(noise)},
          {"samples", samples}};
}

}  // namespace ab

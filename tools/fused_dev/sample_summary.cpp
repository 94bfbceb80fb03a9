// Summary of a timing series.
#include "sample_summary.hpp"

#include <algorithm>
#include <cstddef>

#include "measure/measure.hpp"

namespace ab::fused_dev {

double lower_quantile(std::vector<double> xs, double f) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  f = std::clamp(f, 0.0, 1.0);
  return xs[static_cast<std::size_t>(f * static_cast<double>(xs.size() - 1))];
}

SampleSummary summarize_samples(const std::vector<double>& ms) {
  const Stats s = compute_stats(ms);
  return {s.median, lower_quantile(ms, 0.1), lower_quantile(ms, 0.9), s.min};
}

}  // namespace ab::fused_dev

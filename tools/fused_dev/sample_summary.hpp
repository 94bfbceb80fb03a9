// A timing series as the harness prints it: median (compute_stats, the project's definition), 10th and
// 90th percentiles and minimum, in ms.
#pragma once
#include <vector>

namespace ab::fused_dev {

struct SampleSummary {
  double median = 0, p10 = 0, p90 = 0, min = 0;
};

// The element at rank floor(f * (n - 1)) of the sorted series (0 for an empty one); f in [0, 1].
double lower_quantile(std::vector<double> xs, double f);
SampleSummary summarize_samples(const std::vector<double>& ms);

}  // namespace ab::fused_dev

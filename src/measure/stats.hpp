// Running statistics (Welford) so the sampling loop can test noise after every sample in O(1).
#pragma once
#include <cstdint>

namespace ab {

// Count, mean and sample variance of a growing series; noise() matches compute_stats(...).noise.
class RunningStats {
 public:
  void add(double x);
  std::int64_t count() const { return n_; }
  double mean() const { return mean_; }
  double stdev() const;  // sample (n-1); 0 for n < 2
  double noise() const;  // stdev / mean; NaN (unknown) for n < 2, 0 for mean == 0

 private:
  std::int64_t n_ = 0;
  double mean_ = 0, m2_ = 0;
};

}  // namespace ab

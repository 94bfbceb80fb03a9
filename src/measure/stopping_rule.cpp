// The pure stopping rule: noise reached, sample cap, or time budget spent.
#include "measure/stopping_rule.hpp"

#include <algorithm>

namespace ab {

StopDecision decide_stop(std::int64_t samples, double noise, double elapsed_s, const MeasureSettings& s) {
  if (samples < 1) return {};
  // Noise is a spread: it needs two samples, whatever min_samples says (NaN noise never compares <=).
  if (samples >= std::max<std::int64_t>(s.min_samples, 2) && noise <= s.max_noise) return {true, "noise"};
  if (samples >= s.max_samples) return {true, "max_samples"};
  if (elapsed_s >= s.max_time_s) return {true, "max_time"};
  return {};
}

StopDecision decide_stop(const std::vector<double>& samples_ms, double elapsed_s, const MeasureSettings& s) {
  Stats st = compute_stats(samples_ms);
  return decide_stop(st.samples, st.noise, elapsed_s, s);
}

}  // namespace ab

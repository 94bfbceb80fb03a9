// The pure stopping rule of the sampling loop: given what has been sampled so far, continue or stop and why.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "measure/measure.hpp"

namespace ab {

struct StopDecision {
  bool stop = false;
  std::string reason;  // "noise", "max_time" or "max_samples" when stop; empty otherwise
};

// Called after each sample. `samples` taken so far (>= 1), their relative noise (Stats::noise, stdev/mean
// over all of them), `elapsed_s` of wall time since warm-up ended. In order of precedence:
//   1. samples >= max(min_samples, 2) and noise <= max_noise -> "noise" (converged; wins when limits hit
//                                                        together; one sample has no noise to claim)
//   2. samples >= max_samples                         -> "max_samples"
//   3. elapsed_s >= max_time_s                        -> "max_time" (even below min_samples: a slow forward
//                                                        gets at least one sample, then the budget rules)
// With no samples it always continues.
StopDecision decide_stop(std::int64_t samples, double noise, double elapsed_s, const MeasureSettings& s);

// The same rule over a whole series (noise from compute_stats); for tests and offline checks.
StopDecision decide_stop(const std::vector<double>& samples_ms, double elapsed_s, const MeasureSettings& s);

}  // namespace ab

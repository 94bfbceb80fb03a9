// How evenly a persistent grid's CTAs shared one launch's work, from the per-CTA times a developer build
// records (kernels/fused_cta_times.cuh: per CTA, its start and its consumer warpgroups' ends, %globaltimer ns;
// 0 where nothing was recorded). Host code, no CUDA headers; `fused_dev ctas` prints it.
#pragma once
#include <cstdint>
#include <vector>

namespace ab::fused_dev {

struct CtaBalance {
  int ctas = 0;     // CTAs with a start and an end
  int missing = 0;  // CTAs with a start but no end (a build that lost its marks)
  // In us: first start to last end; the CTAs' busy times (end - start), mean and max; when they end after
  // the first start (10th, 50th, 90th percentile); the last CTA's start.
  double span = 0, busy_mean = 0, busy_max = 0, end_p10 = 0, end_p50 = 0, end_p90 = 0, start_max = 0;
  double idle = 0;  // 1 - busy_mean / span: the share of grid x span the CTAs spent finished or not started
};

// `times`: slots words per CTA, [start, end of warpgroup 1, 2, ...]; a CTA's end is its latest.
CtaBalance cta_balance(const std::vector<std::uint64_t>& times, int slots);

}  // namespace ab::fused_dev

// The load-balance summary of one persistent launch's per-CTA times (cta_balance.hpp).
#include "cta_balance.hpp"

#include <algorithm>
#include <numeric>

#include "sample_summary.hpp"

namespace ab::fused_dev {

CtaBalance cta_balance(const std::vector<std::uint64_t>& times, int slots) {
  CtaBalance b;
  if (slots < 2) return b;
  std::uint64_t t0 = ~0ull, t1 = 0;
  std::vector<double> busy, ends, starts;
  for (std::size_t c = 0; c + static_cast<std::size_t>(slots) <= times.size(); c += static_cast<std::size_t>(slots)) {
    const std::uint64_t start = times[c];
    if (start == 0) continue;
    std::uint64_t end = 0;
    for (int s = 1; s < slots; ++s) end = std::max(end, times[c + static_cast<std::size_t>(s)]);
    if (end < start) {
      ++b.missing;
      continue;
    }
    t0 = std::min(t0, start);
    t1 = std::max(t1, end);
    busy.push_back(static_cast<double>(end - start) * 1e-3);
    ends.push_back(static_cast<double>(end));
    starts.push_back(static_cast<double>(start));
  }
  b.ctas = static_cast<int>(busy.size());
  if (b.ctas == 0) return b;
  for (double& e : ends) e = (e - static_cast<double>(t0)) * 1e-3;
  b.span = static_cast<double>(t1 - t0) * 1e-3;
  b.busy_mean = std::accumulate(busy.begin(), busy.end(), 0.0) / b.ctas;
  b.busy_max = *std::max_element(busy.begin(), busy.end());
  b.end_p10 = lower_quantile(ends, 0.1);
  b.end_p50 = lower_quantile(ends, 0.5);
  b.end_p90 = lower_quantile(ends, 0.9);
  b.start_max = (*std::max_element(starts.begin(), starts.end()) - static_cast<double>(t0)) * 1e-3;
  b.idle = b.span > 0 ? 1.0 - b.busy_mean / b.span : 0.0;
  return b;
}

}  // namespace ab::fused_dev

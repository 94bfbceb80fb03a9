// SM clock sampling schedule, median, and the throttling warning text.
#include "measure/clock_monitor.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ab {

bool ClockMonitor::due(std::int64_t sample_no, double now_s) const {
  if (sample_no >= 1 && (sample_no & (sample_no - 1)) == 0) return true;
  return any_read_ && now_s - last_s_ >= period_s_;
}

void ClockMonitor::record(int mhz, double now_s) {
  any_read_ = true;
  last_s_ = now_s;
  if (mhz > 0) readings_.push_back(mhz);
}

int ClockMonitor::observed_mhz() const {
  if (readings_.empty()) return 0;
  std::vector<int> v(readings_);
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

std::string throttle_warning(int observed_mhz, int max_mhz, double fraction) {
  if (observed_mhz <= 0 || max_mhz <= 0) return {};
  if (observed_mhz >= fraction * max_mhz) return {};
  long pct = std::lround(100.0 * observed_mhz / max_mhz);
  return fmt::format("SM clock {} MHz is {}% of its {} MHz maximum: the GPU may be throttling", observed_mhz, pct,
                     max_mhz);
}

}  // namespace ab

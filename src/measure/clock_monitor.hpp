// SM clock observation during sampling, and the throttling warning. Reads clocks, never sets them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ab {

// Decides when to read the SM clock and summarises the readings. A reading is due on samples 1, 2, 4, 8, ...
// (1-based, a power of two) and whenever at least `period_s` has passed since the last one, so short points
// get a handful of reads and long ones one every period; readings <= 0 (unknown) are dropped.
class ClockMonitor {
 public:
  explicit ClockMonitor(double period_s = 0.25) : period_s_(period_s) {}
  bool due(std::int64_t sample_no, double now_s) const;
  void record(int mhz, double now_s);
  const std::vector<int>& readings() const { return readings_; }
  // Median of the readings (the lower middle one for an even count), 0 when there are none.
  int observed_mhz() const;

 private:
  double period_s_;
  double last_s_ = 0;
  bool any_read_ = false;
  std::vector<int> readings_;
};

// "SM clock 1100 MHz is 56% of its 1980 MHz maximum: the GPU may be throttling" when both are known (> 0)
// and observed < fraction * max; empty otherwise.
std::string throttle_warning(int observed_mhz, int max_mhz, double fraction = 0.8);

}  // namespace ab

// Test hook ATTNBENCH_INJECT_SLOWDOWN: slow chosen strategies by a calibrated fraction of their own time,
// inside the timed region, so that the CI gate's power (how often a real slowdown of X% is caught) can be
// measured on a GPU. A report made with it says so in its settings and warnings.
#pragma once
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/backend.hpp"
#include "measure/measure.hpp"

namespace ab {

// Fraction per strategy name; the key "*" applies to every strategy without its own entry.
using SlowdownSpec = std::map<std::string, double>;

// "5%" or "0.05" (every strategy), or "fused=5%,nested=0.1". Throws UsageError with one line otherwise;
// a fraction must be in [0, 10].
SlowdownSpec parse_slowdown(const std::string& text);
// The fraction for `strategy` (0 when none).
double slowdown_for(const SlowdownSpec& spec, const std::string& strategy);

struct InjectedDelay {
  double fraction = 0;      // asked for
  double delay_ms = 0;      // the delay kernel's length after calibration
  double base_ms = 0;       // the forward alone (median)
  double achieved = 0;      // (forward + delay) / forward - 1, measured after calibration
  nlohmann::json to_json() const;
};

// Finds the delay that makes `forward` plus the delay take (1 + fraction) times `forward` alone, under `s`'s
// timer: delay = fraction * base, then corrected once by what the measured total missed (the delay's own
// launch, the timer's granularity). Each time is the center (center_of_rounds) of 4 short series taken
// alternately with and without the delay, so that a burst of slower running cannot set the delay; 17 short
// series in all. The delay kernel's launch alone costs
// a few microseconds, so on a short forward the achieved slowdown can exceed the fraction asked for (then
// delay_ms is 0 and `achieved` says how much); the report carries both.
InjectedDelay calibrate_delay(const TimedDevice& device, const std::function<void()>& forward, double fraction,
                              const MeasureSettings& s);

}  // namespace ab

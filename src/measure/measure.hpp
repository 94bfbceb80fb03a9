// The measurement engine's entry point: time one strategy's forward the way the settings say, and
// return statistics of GPU time and host time, the timer that actually ran and why sampling stopped.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.hpp"

namespace ab {

enum class TimerKind { events, graph, cupti };
const char* timer_kind_name(TimerKind k);
bool parse_timer_kind(const std::string& s, TimerKind* out);

struct MeasureSettings {
  int warmup = 3;              // untimed forwards first
  int min_samples = 10;        // at least this many samples
  int max_samples = 100000;    // never more than this many
  double max_noise = 0.02;     // stop once relative noise (stdev/mean... see stats.hpp) is at or under this
  double max_time_s = 3.0;     // per point, wall clock, after warm-up
  bool hot = false;            // false: flush L2 before every sample, outside the timed region
  TimerKind timer = TimerKind::events;
  bool keep_samples = false;   // put every sample into the JSON
  nlohmann::json to_json() const;
};

struct Stats {
  double median = 0, mean = 0, min = 0, max = 0, stdev = 0;
  double noise = 0;  // relative noise, stdev / mean
  std::int64_t samples = 0;
  nlohmann::json to_json() const;
};

// Pure statistics over a series of times (ms). Empty input gives all zeros.
Stats compute_stats(const std::vector<double>& xs);

struct Measurement {
  Stats gpu;                  // device time per forward (ms)
  Stats host;                 // host wall time per forward (ms): launch/enqueue cost, see measure.cpp
  std::string timer;          // the timer that actually ran
  std::string stop_reason;    // "noise", "max_time", "max_samples"
  std::vector<double> samples;  // every GPU sample when keep_samples
  int sm_clock_mhz = 0;       // SM clock observed during sampling, 0 if unknown
  std::vector<std::string> warnings;
};

// Time `forward` on `backend`. Throws BackendError on device failures.
Measurement measure_forward(Backend& backend, const std::function<void()>& forward, const MeasureSettings& s);

}  // namespace ab

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

inline constexpr int kMaxRounds = 1000;
inline constexpr double kDefaultStartDelayMs = 0.2;  // peer_torch.py spins ~0.2 ms the same way
inline constexpr double kMaxStartDelayMs = 100;

struct MeasureSettings {
  int warmup = 3;              // untimed forwards first (one when the rest would take longer than max_time_s)
  int min_samples = 10;        // at least this many samples
  int max_samples = 100000;    // never more than this many
  double max_noise = 0.02;     // stop once relative noise (Stats::noise, stdev/mean) is at or under this
  double max_time_s = 3.0;     // per point, wall clock, after warm-up
  bool hot = false;            // false: flush L2 before every sample, outside the timed region
  TimerKind timer = TimerKind::events;
  // events and graph timers on a GPU: a delay kernel of this length is queued before the start event, so the
  // host enqueues the timed work while the GPU is busy and the first launch's dispatch is not timed (as
  // nvbench's blocking kernel and scripts/peer_torch.py's spin do). Host gaps between later launches past
  // this delay stay in the time. 0: the timed region starts on an idle GPU (attnbench before 2026-11-23).
  double start_delay_ms = kDefaultStartDelayMs;
  bool keep_samples = false;   // put every sample into the JSON
  // Measurements per row, each with its own warm-up and, on a GPU, fresh memory placement (the inputs and
  // the L2 flush buffer allocated anew); min/max samples, max_noise and max_time apply to each round.
  int rounds = 1;
  nlohmann::json to_json() const;
};

struct Stats {
  double median = 0, mean = 0, min = 0, max = 0, stdev = 0;
  // Relative noise: sample stdev / mean of the series (the coefficient of variation; nvbench's "Noise"
  // column). A dispersion of the samples, not a standard error: it does not shrink as samples are added,
  // so a genuinely noisy forward never meets max_noise and runs to max_time. NaN (null in JSON: unknown)
  // with fewer than 2 samples, so one sample never meets the noise target; 0 for a zero mean.
  double noise = 0;
  std::int64_t samples = 0;
  nlohmann::json to_json() const;
};

// Pure statistics over a series of times (ms). Empty input gives all zeros. median: the middle element,
// or the mean of the two middle ones for an even count; stdev: sample standard deviation (n-1), 0 for n < 2.
Stats compute_stats(const std::vector<double>& xs);

// Forwards the warm-up runs when its first takes `first_forward_s`: s.warmup, or one when the other s.warmup - 1
// would take longer than s.max_time_s (a forward of seconds is warmed once, as nvbench warms once).
inline int warmup_forwards(const MeasureSettings& s, double first_forward_s) {
  return s.warmup > 1 && first_forward_s * (s.warmup - 1) > s.max_time_s ? 1 : s.warmup;
}

// Throws UsageError when settings cannot run: warmup < 0, min_samples < 1, max_samples < 1, max_noise < 0
// or not finite, max_time_s <= 0 or not finite. min_samples > max_samples is allowed (max_samples caps).
void validate_measure_settings(const MeasureSettings& s);

struct Measurement {
  Stats gpu;                  // device time per forward (ms)
  // Host wall time per sample (ms), steady_clock around the one call that enqueues the timed work
  // (forward() for events and cupti, replay() for graph), with no synchronize inside it: the launch/enqueue
  // cost. For a launch-bound forward host ~= gpu; for a GPU-bound one host << gpu. See timing_loop.cpp.
  Stats host;
  std::string timer;          // the timer that actually ran
  std::string stop_reason;    // "noise", "max_time", "max_samples"
  std::vector<double> samples;  // every GPU sample, in order (the report has them only when keep_samples)
  int sm_clock_mhz = 0;       // SM clock observed during sampling, 0 if unknown
  std::vector<std::string> warnings;
};

// What the measurement engine uses of a backend, and nothing else of it.
struct TimedDevice {
  BackendKind kind;      // cpu runs work as it is enqueued: no start delay; warnings name it
  Profiler& profiler;    // timers, L2 flush, capture, launch counter, SM clock, the start delay
  DeviceMemory& memory;  // the stream barrier (synchronize)
  // The maximum SM clock in MHz (0: unknown), asked only once an SM clock was read (the throttle warning).
  std::function<int()> max_sm_clock_mhz;
};
// `backend`'s kind, profiler and memory, and its DeviceInfo::clock_mhz_max when asked.
TimedDevice timed_device(Backend& backend);

// Time `forward` on `device`. Throws BackendError on device failures, UsageError on invalid settings.
// Prints nothing: the caller shows Measurement::warnings (Progress::message keeps the progress line intact).
Measurement measure_forward(const TimedDevice& device, const std::function<void()>& forward, const MeasureSettings& s);
// The same on timed_device(backend).
Measurement measure_forward(Backend& backend, const std::function<void()>& forward, const MeasureSettings& s);

// A monotonic clock in seconds. measure_forward above uses std::chrono::steady_clock; tests pass a scripted
// one. It times host_ms and the max_time budget.
using MonotonicClock = std::function<double()>;
Measurement measure_forward(const TimedDevice& device, const std::function<void()>& forward, const MeasureSettings& s,
                            const MonotonicClock& clock);

}  // namespace ab

// The three timers (events, graph, cupti) as samplers: each times one forward, GPU and host, per take().
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "measure/measure.hpp"

namespace ab {

struct Sample {
  double gpu_ms = 0;   // what the timer measured for one forward
  double host_ms = 0;  // host wall time of the enqueuing call alone (see Measurement::host)
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  virtual TimerKind kind() const = 0;
  // One timed forward. `while_running` is called after the work is enqueued and the host clock stopped,
  // before waiting for the GPU (the forward may still be running): the loop reads the SM clock there.
  virtual Sample take(const std::function<void()>& while_running) = 0;
};

// Builds the sampler for s.timer, after the caller's warm-up forwards have run. What it does first:
//   events: nothing.
//   graph:  one eager forward when s.warmup == 0 (lazy setup such as workspace allocation cannot happen inside
//           a capture), device.profiler.capture(forward), then one untimed replay (the first launch uploads the graph).
//           capture returning nullptr, or throwing a non-sticky BackendError, falls back to events with the
//           warning "graph capture unavailable on <backend>: timed with events" (plus the error, if any).
//   cupti:  one untimed probe forward inside begin/end_launch_count; kernel_time_ms <= 0 falls back to events
//           with "cupti kernel time unavailable on <backend>: timed with events".
// Warnings are appended to `warnings`. The returned sampler's kind() is the timer that actually runs.
std::unique_ptr<Sampler> make_sampler(const TimedDevice& device, const std::function<void()>& forward,
                                      const MeasureSettings& s, const MonotonicClock& clock,
                                      std::vector<std::string>& warnings);

}  // namespace ab

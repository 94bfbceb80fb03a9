// The events, graph and cupti samplers, and the choice between them with fallback to events.
#include "measure/samplers.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace ab {

namespace {

double checked_ms(double ms, const char* what) {
  if (!std::isfinite(ms) || ms < 0) throw BackendError(fmt::format("{} timer returned {} ms", what, ms));
  return ms;
}

// The DeviceTimer (CUDA events) around one call: forward() or a graph replay(), behind a delay kernel of
// `start_delay_ms` on a GPU (MeasureSettings::start_delay_ms; the CPU backend runs synchronously).
class TimerSampler : public Sampler {
 public:
  TimerSampler(TimerKind kind, const TimedDevice& d, std::function<void()> call, const MonotonicClock& clock,
               double start_delay_ms)
      : kind_(kind), profiler_(d.profiler), timer_(d.profiler.make_timer()), call_(std::move(call)), clock_(clock),
        start_delay_ms_(d.kind == BackendKind::cpu ? 0 : start_delay_ms) {}
  TimerKind kind() const override { return kind_; }
  Sample take(const std::function<void()>& while_running) override {
    Sample s;
    if (start_delay_ms_ > 0) profiler_.enqueue_delay(start_delay_ms_);
    timer_->start();
    double t0 = clock_();
    call_();
    double t1 = clock_();
    timer_->stop();
    s.host_ms = (t1 - t0) * 1e3;
    if (while_running) while_running();
    s.gpu_ms = checked_ms(timer_->elapsed_ms(), timer_kind_name(kind_));
    return s;
  }

 private:
  TimerKind kind_;
  Profiler& profiler_;
  std::unique_ptr<DeviceTimer> timer_;
  std::function<void()> call_;
  const MonotonicClock& clock_;
  double start_delay_ms_;
};

// Sum of the kernels' durations from the launch counter (CUPTI activity records).
class CuptiSampler : public Sampler {
 public:
  CuptiSampler(Profiler& profiler, const std::function<void()>& forward, const MonotonicClock& clock)
      : profiler_(profiler), forward_(forward), clock_(clock) {}
  TimerKind kind() const override { return TimerKind::cupti; }
  Sample take(const std::function<void()>& while_running) override {
    Sample s;
    profiler_.begin_launch_count();
    LaunchRecord rec;
    try {
      double t0 = clock_();
      forward_();
      double t1 = clock_();
      s.host_ms = (t1 - t0) * 1e3;
      if (while_running) while_running();
    } catch (...) {
      try {
        profiler_.end_launch_count();
      } catch (...) {
      }
      throw;
    }
    rec = profiler_.end_launch_count();
    if (!(rec.kernel_time_ms > 0))
      throw BackendError(fmt::format("cupti timer: no kernel time for a sample (record source '{}')", rec.source));
    s.gpu_ms = checked_ms(rec.kernel_time_ms, "cupti");
    return s;
  }

 private:
  Profiler& profiler_;
  const std::function<void()>& forward_;
  const MonotonicClock& clock_;
};

std::unique_ptr<Sampler> events_sampler(const TimedDevice& d, const std::function<void()>& forward,
                                        const MeasureSettings& s, const MonotonicClock& clock) {
  return std::make_unique<TimerSampler>(TimerKind::events, d, [&forward] { forward(); }, clock, s.start_delay_ms);
}

std::unique_ptr<Sampler> graph_sampler(const TimedDevice& d, const std::function<void()>& forward,
                                       const MeasureSettings& s, const MonotonicClock& clock,
                                       std::vector<std::string>& warnings) {
  const char* backend_name = backend_kind_name(d.kind);
  if (s.warmup == 0) {
    forward();
    d.memory.synchronize();
  }
  std::shared_ptr<CapturedForward> graph;
  std::string why;
  try {
    graph = d.profiler.capture(forward);
  } catch (const BackendError& e) {
    if (e.sticky) throw;
    why = fmt::format(" ({})", e.what());
  }
  if (!graph) {
    warnings.push_back(fmt::format("graph capture unavailable on {}{}: timed with events", backend_name, why));
    return events_sampler(d, forward, s, clock);
  }
  graph->replay();
  d.memory.synchronize();
  return std::make_unique<TimerSampler>(TimerKind::graph, d, [graph] { graph->replay(); }, clock, s.start_delay_ms);
}

std::unique_ptr<Sampler> cupti_sampler(const TimedDevice& d, const std::function<void()>& forward,
                                       const MeasureSettings& s, const MonotonicClock& clock,
                                       std::vector<std::string>& warnings) {
  d.profiler.begin_launch_count();
  try {
    forward();
  } catch (...) {
    try {
      d.profiler.end_launch_count();
    } catch (...) {
    }
    throw;
  }
  LaunchRecord probe = d.profiler.end_launch_count();
  if (!(probe.kernel_time_ms > 0)) {
    warnings.push_back(
        fmt::format("cupti kernel time unavailable on {}: timed with events", backend_kind_name(d.kind)));
    return events_sampler(d, forward, s, clock);
  }
  return std::make_unique<CuptiSampler>(d.profiler, forward, clock);
}

}  // namespace

std::unique_ptr<Sampler> make_sampler(const TimedDevice& device, const std::function<void()>& forward,
                                      const MeasureSettings& s, const MonotonicClock& clock,
                                      std::vector<std::string>& warnings) {
  switch (s.timer) {
    case TimerKind::graph: return graph_sampler(device, forward, s, clock, warnings);
    case TimerKind::cupti: return cupti_sampler(device, forward, s, clock, warnings);
    case TimerKind::events: break;
  }
  return events_sampler(device, forward, s, clock);
}

}  // namespace ab

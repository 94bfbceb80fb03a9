// measure_forward: warm-up, timer choice, the sampling loop with L2 flushes, clock reads and the stopping rule.
//
// One sample, in order:
//   cold (default): device.profiler.flush_l2(); device.memory.synchronize();   <- outside the timed region. The synchronize
//                   makes the GPU idle when the timed region starts, as it is in hot mode, so hot and cold
//                   differ only in what is in L2 (not in whether the flush hides the first launch's latency).
//   hot:            nothing (the previous sample already waited for the GPU).
//   start delay:    events and graph on a GPU: a delay kernel of s.start_delay_ms (default 0.2), so the GPU is
//                   busy while the host records the start event and enqueues the forward's first launches;
//                   the time starts when the delay ends, not when the host reaches the first launch.
//   timed:          events: timer.start; forward(); timer.stop; wait   -> gpu_ms = event time
//                   graph:  timer.start; replay();  timer.stop; wait   -> gpu_ms = event time of one replay
//                   cupti:  begin_launch_count; forward(); end_launch_count -> gpu_ms = summed kernel durations
//   host_ms:        steady_clock around the forward()/replay() call alone: the host time to enqueue one
//                   forward (API calls, launches, and any blocking inside them, e.g. a full launch queue), with
//                   no synchronize inside it. Events time includes launch gaps on the GPU; for a launch-bound
//                   strategy host_ms ~= gpu_ms, and graph timing removes most of those gaps.
// Warm-up: s.warmup eager forwards (one when the other s.warmup - 1 would take longer than max_time: the first is
// timed), then a synchronize; then the timer's own preparation (samplers.hpp).
// The max_time budget starts after all of that and counts everything in the loop (flushes included).
#include <chrono>

#include "core/stop_request.hpp"
#include "measure/clock_monitor.hpp"
#include "measure/measure.hpp"
#include "measure/samplers.hpp"
#include "measure/stats.hpp"
#include "measure/stopping_rule.hpp"

namespace ab {

TimedDevice timed_device(Backend& backend) {
  return {backend.kind(), backend.profiler(), backend.memory(), [&backend] { return backend.device_info().clock_mhz_max; }};
}

Measurement measure_forward(const TimedDevice& device, const std::function<void()>& forward, const MeasureSettings& s,
                            const MonotonicClock& clock) {
  validate_measure_settings(s);
  Measurement m;

  // Warm-up: the first forward waited for and timed on the host's clock, the others as warmup_forwards says (a
  // forward of seconds, nested over a long paged decode's millions of launches, is warmed once).
  if (s.warmup > 0) {
    const double t0 = clock();
    forward();
    device.memory.synchronize();
    for (int i = 1, n = warmup_forwards(s, clock() - t0); i < n; ++i) forward();
  }
  device.memory.synchronize();

  std::unique_ptr<Sampler> sampler = make_sampler(device, forward, s, clock, m.warnings);
  m.timer = timer_kind_name(sampler->kind());

  std::vector<double> gpu, host;
  RunningStats running;
  ClockMonitor clocks;
  const double t_start = clock();
  StopDecision decision;
  while (!decision.stop) {
    if (!s.hot) {
      device.profiler.flush_l2();
      device.memory.synchronize();
    }
    const std::int64_t sample_no = running.count() + 1;
    Sample x = sampler->take([&] {
      double now = clock() - t_start;
      if (clocks.due(sample_no, now)) clocks.record(device.profiler.current_sm_clock_mhz(), now);
    });
    gpu.push_back(x.gpu_ms);
    host.push_back(x.host_ms);
    running.add(x.gpu_ms);
    decision = decide_stop(running.count(), running.noise(), clock() - t_start, s);
    // SIGINT/SIGTERM: the measurement ends now (the runner discards it; nothing unfinished is reported).
    if (!decision.stop && stop_requested()) decision = StopDecision{true, "interrupted"};
  }

  m.stop_reason = decision.reason;
  m.gpu = compute_stats(gpu);
  m.host = compute_stats(host);
  m.samples = std::move(gpu);
  m.sm_clock_mhz = clocks.observed_mhz();
  if (m.sm_clock_mhz > 0) {
    std::string w = throttle_warning(m.sm_clock_mhz, device.max_sm_clock_mhz ? device.max_sm_clock_mhz() : 0);
    if (!w.empty()) m.warnings.push_back(std::move(w));
  }
  return m;
}

Measurement measure_forward(const TimedDevice& device, const std::function<void()>& forward, const MeasureSettings& s) {
  static const MonotonicClock steady = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  return measure_forward(device, forward, s, steady);
}

Measurement measure_forward(Backend& backend, const std::function<void()>& forward, const MeasureSettings& s) {
  return measure_forward(timed_device(backend), forward, s);
}

}  // namespace ab

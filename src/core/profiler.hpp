// The measurement interface of a backend: timers, L2 flush, forward capture for replay, the launch
// counter (CUPTI on CUDA), the SM clock, profiler ranges (NVTX on CUDA) and the delay kernel.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ab {

class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double elapsed_ms() = 0;  // waits for stop to complete
};

// A forward captured once (a CUDA graph on the GPU) and replayed.
class CapturedForward {
 public:
  virtual ~CapturedForward() = default;
  virtual void replay() = 0;
};

struct LaunchRecord {
  std::int64_t kernels = 0;     // device kernels that ran (CUDA: CUPTI; CPU: every primitive call)
  std::int64_t gemm_calls = -1;  // library GEMM calls the backend received (-1: not counted)
  std::int64_t other_kernels = -1;  // non-GEMM primitive calls the backend received (-1: not counted)
  std::vector<std::string> kernel_names;  // distinct names with counts, "name x3"
  double kernel_time_ms = 0;   // summed kernel durations (CUPTI), 0 where unknown
  std::string source;          // "cupti" or "cpu-counter"
};

class Profiler {
 public:
  virtual ~Profiler() = default;
  virtual std::unique_ptr<DeviceTimer> make_timer() = 0;
  virtual void flush_l2() = 0;
  // Captures `forward` for replay; returns nullptr where the backend cannot capture.
  virtual std::unique_ptr<CapturedForward> capture(const std::function<void()>& forward) = 0;
  virtual void begin_launch_count() = 0;
  virtual LaunchRecord end_launch_count() = 0;  // synchronizes
  virtual int current_sm_clock_mhz() { return 0; }
  // Profiler ranges (NVTX on CUDA; no-ops on CPU).
  virtual void range_push(const std::string& name) { (void)name; }
  virtual void range_pop() {}
  // Enqueue `ms` of device time that computes nothing, in stream order after whatever was enqueued before
  // (cuda: one kernel spinning on the global timer, not counted as a launch; cpu: a busy wait). It keeps the
  // GPU busy while the host enqueues timed work (MeasureSettings::start_delay_ms, tune/queued_screen.hpp)
  // and slows a forward on purpose (run/injected_slowdown.hpp). Throws BackendError (this default: the
  // backend has no delay).
  virtual void enqueue_delay(double ms);
};

// RAII profiler range.
class ScopedRange {
 public:
  ScopedRange(Profiler& p, const std::string& name) : p_(p) { p_.range_push(name); }
  ~ScopedRange() { p_.range_pop(); }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;

 private:
  Profiler& p_;
};

}  // namespace ab

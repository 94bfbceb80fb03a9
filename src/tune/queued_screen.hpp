// The screening timer: CUDA events around a shape's own GEMM calls, queued behind a short delay kernel, so
// that one sample costs the calls' GPU time and one synchronisation instead of a graph capture and
// instantiation (what screening cost per candidate before, v7-v9 in docs/perf-notes.md).
#pragma once
#include <functional>
#include <memory>

#include "core/backend.hpp"
#include "measure/measure.hpp"

namespace ab {

class QueuedScreen {
 public:
  // `flush_l2`: flush L2 before every sample (outside the timed region), as the full measurement does.
  // `clock` (seconds) times the host's enqueue; unset: the steady clock (tests pass a scripted one).
  QueuedScreen(Backend& backend, bool flush_l2, MonotonicClock clock = nullptr);
  // One sample of `calls` in milliseconds of device time. On a GPU the delay kernel keeps the device busy
  // while the host enqueues the start event, the calls and the stop event, so the events time the GPU's
  // work back to back, not the host's launches (nested's 32 calls are launch-bound otherwise). A sample
  // whose enqueue outlasted its delay is taken again behind the same delay (a kernel's first launch, which
  // loads its module, is slow once), and when that overran too, once more behind twice its enqueue time. The
  // next delay is twice the recent enqueue time: the last take's, or a slower one forgotten by 10% a sample,
  // so that a one-off slow enqueue does not slow every later sample.
  // The CPU backend runs synchronously: no delay there.
  double sample(const std::function<void()>& calls);
  double delay_ms() const { return delay_ms_; }

 private:
  double take(const std::function<void()>& calls, double* host_ms);
  Backend& be_;
  bool flush_;
  bool queue_;
  std::unique_ptr<DeviceTimer> timer_;
  MonotonicClock clock_;
  double delay_ms_ = 0.05;
  double enqueue_ms_ = 0;  // the recent enqueue time (see sample)
};

}  // namespace ab

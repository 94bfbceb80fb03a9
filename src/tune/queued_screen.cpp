// The screening timer (see the header): flush, delay kernel, start event, the calls, stop event, wait.
#include "tune/queued_screen.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace ab {

namespace {
constexpr double kMaxDelayMs = 20;   // a host that needs longer to enqueue gets host time in its samples
constexpr double kMinDelayMs = 0.05;
// How fast the enqueue estimate forgets a slow sample: by this factor per sample. The first launch of each
// cuBLASLt kernel loads its module (lazy loading: milliseconds), and an exhaustive search launches hundreds
// of kernels for the first time; when the delay kept the slowest enqueue ever seen, one such launch made
// every later sample of the shape wait milliseconds. That was not what made the whole space take ~10 minutes
// (issue 48): the tune timed with this delay in place took as long, its time being the samples of the many
// candidates within the probe cutoff (docs/perf-log/2026-11-27-scale-out-first-look.md), which successive
// halving now cuts (tune/shape_screen.hpp).
constexpr double kForget = 0.9;
}

QueuedScreen::QueuedScreen(Backend& backend, bool flush_l2, MonotonicClock clock)
    : be_(backend), flush_(flush_l2), queue_(backend.kind() != BackendKind::cpu),
      timer_(backend.profiler().make_timer()), clock_(std::move(clock)) {
  if (!clock_)
    clock_ = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
}

double QueuedScreen::take(const std::function<void()>& calls, double* host_ms) {
  if (flush_) be_.profiler().flush_l2();
  if (queue_) be_.profiler().enqueue_delay(delay_ms_);
  const double t0 = clock_();
  timer_->start();
  calls();
  timer_->stop();
  *host_ms = (clock_() - t0) * 1e3;
  const double ms = timer_->elapsed_ms();
  if (!std::isfinite(ms) || ms < 0) throw BackendError(fmt::format("screening timer returned {} ms", ms));
  return ms;
}

double QueuedScreen::sample(const std::function<void()>& calls) {
  double host_ms = 0;
  double ms = take(calls, &host_ms);
  if (!queue_) return ms;
  // The GPU may have waited for the host: taken again. First behind the same delay: a slow enqueue is most
  // often a kernel's first launch loading its module (an exhaustive search launches thousands of kernels for
  // the first time, most of them in a probe), quick the second time; a retake behind twice that slow enqueue
  // kept the GPU idle for it once more, twice over. Only a retake that overran too is taken once more, behind
  // twice its own enqueue (the host is slow now).
  for (int retake = 0; retake < 2 && host_ms > delay_ms_ && host_ms < kMaxDelayMs; ++retake) {
    if (retake == 1) delay_ms_ = std::min(kMaxDelayMs, 2 * host_ms);
    ms = take(calls, &host_ms);
  }
  // The next delay: twice the recent enqueue time (the last take's, or a slower one fading by kForget a sample).
  enqueue_ms_ = std::max(host_ms, kForget * enqueue_ms_);
  delay_ms_ = std::clamp(2 * enqueue_ms_, kMinDelayMs, kMaxDelayMs);
  return ms;
}

}  // namespace ab

// The tune tests' device clock: a profiler whose timers read a clock that only the fakes' GEMM calls advance
// (spend), so that a candidate's probe, screen and forward times are exact on any machine, sanitizers and a
// loaded 2-core host included (sleeps timed by the host clock once made these tests flaky). It also counts
// the L2 flushes asked of it. Shared by test_tune.cpp, test_screen_halving.cpp and test_group_probe.cpp.
#pragma once
#include <memory>

#include "core/backend_decorators.hpp"

namespace ab_test {

class VirtualClock : public ab::ForwardingProfiler {
 public:
  using ab::ForwardingProfiler::ForwardingProfiler;
  void spend(double ms) { now_ms_ += ms; }
  std::unique_ptr<ab::DeviceTimer> make_timer() override { return std::make_unique<Timer>(now_ms_); }
  void flush_l2() override {
    ++flushes_;
    ab::ForwardingProfiler::flush_l2();
  }
  long flushes() const { return flushes_; }

 private:
  class Timer : public ab::DeviceTimer {
   public:
    explicit Timer(const double& now) : now_(now) {}
    void start() override { t0_ = now_; }
    void stop() override { t1_ = now_; }
    double elapsed_ms() override { return t1_ - t0_; }

   private:
    const double& now_;
    double t0_ = 0, t1_ = 0;
  };
  double now_ms_ = 0;
  long flushes_ = 0;
};

}  // namespace ab_test

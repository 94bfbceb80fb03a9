// The screening timer (tune/queued_screen.hpp) on a simulated asynchronous device: L2 flush, then the delay
// kernel, then the events around the calls; the delay follows the host's recent enqueue time (twice it), a
// sample whose enqueue outlasted its delay is taken again behind the same delay, and only when that overran too
// behind twice its enqueue; a one-off slow enqueue lengthens no delay; the CPU backend (synchronous) gets none.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.hpp"
#include "core/backend_decorators.hpp"
#include "tune/queued_screen.hpp"

using namespace ab;

namespace {

// The CPU backend dressed as a GPU: every flush, delay and timer event is logged in order.
class LoggingDevice : public ComposedBackend {
 public:
  LoggingDevice(Backend& inner, BackendKind kind)
      : ComposedBackend(inner), kind_(kind), profiler_(inner.profiler(), log) {
    replace_profiler(profiler_);
  }
  BackendKind kind() const override { return kind_; }
  std::vector<std::string> log;
  double elapsed = 1.25;  // what each timer says

 private:
  struct Timer : DeviceTimer {
    Timer(LoggingDevice& d) : d_(d) {}
    void start() override { d_.log.push_back("start"); }
    void stop() override { d_.log.push_back("stop"); }
    double elapsed_ms() override { return d_.elapsed; }
    LoggingDevice& d_;
  };
  struct Profiler : ForwardingProfiler {
    Profiler(ab::Profiler& f, std::vector<std::string>& log) : ForwardingProfiler(f), log_(log) {}
    std::unique_ptr<DeviceTimer> make_timer() override { return std::make_unique<Timer>(*device); }
    void flush_l2() override { log_.push_back("flush"); }
    void enqueue_delay(double ms) override { log_.push_back("delay " + std::to_string(ms)); }
    std::vector<std::string>& log_;
    LoggingDevice* device = nullptr;
  };
  BackendKind kind_;
  Profiler profiler_;

 public:
  void wire() { profiler_.device = this; }
};

double delay_of(const std::string& entry) { return std::stod(entry.substr(6)); }

}  // namespace

TEST(QueuedScreen, TheDelayKernelGoesBeforeTheEventsAndFollowsTheHostsEnqueueTime) {
  auto cpu = make_cpu_backend();
  LoggingDevice dev(*cpu, BackendKind::cuda);
  dev.wire();
  double now = 100;  // seconds, on the scripted clock
  QueuedScreen screen(dev, /*flush_l2=*/true, [&] { return now; });
  auto slow_enqueue = [&] {  // a host that takes 3 ms to enqueue the calls: longer than the first delay
    dev.log.push_back("calls");
    now += 0.003;
  };
  EXPECT_EQ(screen.sample(slow_enqueue), 1.25);
  // The first take's enqueue outlasted its 0.05 ms delay: taken again behind the same delay (a first launch is
  // slow once), which it outlasted too: taken a third time behind a delay of twice the enqueue.
  ASSERT_EQ(dev.log.size(), 15u);
  const std::vector<std::string> order = {"flush", "delay", "start", "calls", "stop"};
  for (std::size_t i = 0; i < dev.log.size(); ++i) EXPECT_EQ(dev.log[i].substr(0, order[i % 5].size()), order[i % 5]) << i;
  EXPECT_NEAR(delay_of(dev.log[1]), 0.05, 1e-9);
  EXPECT_NEAR(delay_of(dev.log[6]), 0.05, 1e-9);
  const double second = delay_of(dev.log[11]);
  EXPECT_NEAR(second, 6.0, 1e-6);
  EXPECT_NEAR(screen.delay_ms(), second, 1e-6);
  // A quick enqueue now fits inside the delay: one take, the delay kept.
  dev.log.clear();
  dev.elapsed = 0.5;
  EXPECT_EQ(screen.sample([&] {
              dev.log.push_back("calls");
              now += 0.001;
            }),
            0.5);
  ASSERT_EQ(dev.log.size(), 5u);
  EXPECT_NEAR(delay_of(dev.log[1]), second, 1e-6);
  // A host slower than the 20 ms cap: the delay stops there and the sample is not taken again.
  dev.log.clear();
  screen.sample([&] {
    dev.log.push_back("calls");
    now += 0.050;
  });
  EXPECT_EQ(dev.log.size(), 5u);
  EXPECT_NEAR(screen.delay_ms(), 20.0, 1e-9);
}

TEST(QueuedScreen, AOneOffSlowEnqueueIsTakenAgainBehindTheUsualDelay) {
  // The first launch of a cuBLASLt kernel loads its module (milliseconds of host time). Its sample is taken
  // again behind the usual short delay, which the quick second enqueue fits in: the GPU does not sit idle for
  // twice the load as it did behind a delay sized for the slow enqueue, and the samples after it keep it.
  auto cpu = make_cpu_backend();
  LoggingDevice dev(*cpu, BackendKind::cuda);
  dev.wire();
  double now = 0;
  QueuedScreen screen(dev, /*flush_l2=*/false, [&] { return now; });
  auto enqueue = [&](double ms) {
    return [&, ms] {
      dev.log.push_back("calls");
      now += ms / 1e3;
    };
  };
  for (int i = 0; i < 5; ++i) screen.sample(enqueue(0.01));
  EXPECT_NEAR(screen.delay_ms(), 0.05, 1e-9);
  dev.log.clear();
  bool first = true;
  screen.sample([&] {  // 5 ms the first time (the module loads), 0.01 ms when taken again
    dev.log.push_back("calls");
    now += (first ? 5.0 : 0.01) / 1e3;
    first = false;
  });
  ASSERT_EQ(dev.log.size(), 8u);  // delay start calls stop, twice
  EXPECT_NEAR(delay_of(dev.log[4]), 0.05, 1e-9);
  EXPECT_NEAR(screen.delay_ms(), 0.05, 1e-9) << "the retake's own quick enqueue sets the next delay";
  // A host that turns slow for good: the delay follows it up, and comes down as it speeds up again.
  for (int i = 0; i < 3; ++i) screen.sample(enqueue(2.0));
  EXPECT_NEAR(screen.delay_ms(), 4.0, 1e-6);
  for (int i = 0; i < 60; ++i) screen.sample(enqueue(0.01));
  EXPECT_NEAR(screen.delay_ms(), 0.05, 1e-9);
}

TEST(QueuedScreen, HotScreensDoNotFlushAndASynchronousBackendGetsNoDelay) {
  auto cpu = make_cpu_backend();
  LoggingDevice dev(*cpu, BackendKind::cuda);
  dev.wire();
  QueuedScreen hot(dev, /*flush_l2=*/false);
  hot.sample([&] { dev.log.push_back("calls"); });
  ASSERT_FALSE(dev.log.empty());
  EXPECT_EQ(dev.log.front().substr(0, 5), "delay");
  for (const std::string& e : dev.log) EXPECT_NE(e, "flush");

  LoggingDevice host(*cpu, BackendKind::cpu);
  host.wire();
  QueuedScreen sync(host, true);
  sync.sample([&] {
    host.log.push_back("calls");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  });
  EXPECT_EQ(host.log, (std::vector<std::string>{"flush", "start", "calls", "stop"}));
}

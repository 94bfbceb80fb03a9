// Measurement engine, the timing loop: a fake profiler and memory with a scripted timer and clock drive measure_forward.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "measure/measure.hpp"
#include "measure/rounds.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

// Everything a run did, in order, plus a fake clock (seconds) that the scripted GPU times advance.
struct World {
  std::vector<std::string> log;  // "fwd", "flush", "sync", "start", "stop", "replay", "count+", "count-", "clock"
  double now = 0;
  std::vector<double> gpu_script{1.0};  // ms per timed sample, cycled
  std::size_t next = 0;
  double host_ms_per_forward = 0;       // the forward advances the clock by this much
  double timer_call_ms = 0;             // and so does each timer start/stop (recording an event)
  bool can_capture = false;
  bool capture_throws = false;
  double cupti_ms = 0;                  // kernel_time_ms per counted forward (0: unavailable)
  int sm_clock = 0, max_clock = 1980;
  BackendKind kind = BackendKind::cpu;  // cuda: the sampler queues its start delay (MeasureSettings::start_delay_ms)
  std::vector<double> delays_ms;        // every enqueue_delay, in order (logged as "delay")
  double take_script() {
    double ms = gpu_script[next++ % gpu_script.size()];
    now += ms * 1e-3;
    return ms;
  }
  int count(const std::string& what) const { return static_cast<int>(std::count(log.begin(), log.end(), what)); }
};

class FakeTimer : public DeviceTimer {
 public:
  explicit FakeTimer(World& w) : w_(w) {}
  void start() override {
    w_.log.push_back("start");
    w_.now += w_.timer_call_ms * 1e-3;
  }
  void stop() override {
    w_.log.push_back("stop");
    w_.now += w_.timer_call_ms * 1e-3;
  }
  double elapsed_ms() override { return w_.take_script(); }

 private:
  World& w_;
};

class FakeGraph : public CapturedForward {
 public:
  explicit FakeGraph(World& w) : w_(w) {}
  void replay() override {
    w_.log.push_back("replay");
    w_.now += w_.host_ms_per_forward * 1e-3;
  }

 private:
  World& w_;
};

[[noreturn]] void unused() { throw std::logic_error("not used by the measurement engine"); }

// The memory the engine uses: only its stream barrier.
class FakeMemory final : public DeviceMemory {
 public:
  explicit FakeMemory(World& w) : w_(w) {}
  void* alloc(std::size_t) override { unused(); }
  void free(void*) override {}
  void upload(void*, const void*, std::size_t) override { unused(); }
  void download(void*, const void*, std::size_t) override { unused(); }
  void fill_bytes(void*, unsigned char, std::size_t) override { unused(); }
  void fill_random(void*, const RandomFill&) override { unused(); }
  void synchronize() override { w_.log.push_back("sync"); }

 private:
  World& w_;
};

class FakeProfiler final : public Profiler {
 public:
  explicit FakeProfiler(World& w) : w_(w) {}
  std::unique_ptr<DeviceTimer> make_timer() override { return std::make_unique<FakeTimer>(w_); }
  void flush_l2() override { w_.log.push_back("flush"); }
  std::unique_ptr<CapturedForward> capture(const std::function<void()>&) override {
    if (w_.capture_throws) throw BackendError("cudaStreamBeginCapture: operation not permitted");
    if (!w_.can_capture) return nullptr;
    return std::make_unique<FakeGraph>(w_);
  }
  void begin_launch_count() override { w_.log.push_back("count+"); }
  LaunchRecord end_launch_count() override {
    w_.log.push_back("count-");
    LaunchRecord r;
    r.kernel_time_ms = w_.cupti_ms;
    r.source = w_.cupti_ms > 0 ? "cupti" : "cpu-counter";
    return r;
  }
  int current_sm_clock_mhz() override {
    w_.log.push_back("clock");
    return w_.sm_clock;
  }
  void enqueue_delay(double ms) override {
    w_.log.push_back("delay");
    w_.delays_ms.push_back(ms);
  }

 private:
  World& w_;
};

struct LoopRun {
  World w;
  FakeMemory memory{w};
  FakeProfiler profiler{w};
  Measurement m;
  Measurement go(const MeasureSettings& s) {
    MonotonicClock clock = [this] { return w.now; };
    m = measure_forward(
        TimedDevice{w.kind, profiler, memory, [this] { return w.max_clock; }},
        [this] {
          w.log.push_back("fwd");
          w.now += w.host_ms_per_forward * 1e-3;
        },
        s, clock);
    return m;
  }
  // Forwards issued before the first timed region opened.
  int forwards_before_first_sample() const {
    auto first = std::find_if(w.log.begin(), w.log.end(), [](const std::string& e) { return e == "start" || e == "count+"; });
    return static_cast<int>(std::count(w.log.begin(), first, std::string("fwd")));
  }
};

MeasureSettings settings(int min_samples, double max_noise, double max_time_s) {
  MeasureSettings s;
  s.warmup = 3;
  s.min_samples = min_samples;
  s.max_noise = max_noise;
  s.max_time_s = max_time_s;
  return s;
}

bool has_warning(const Measurement& m, const std::string& text) {
  return std::find(m.warnings.begin(), m.warnings.end(), text) != m.warnings.end();
}

}  // namespace

// On a GPU the events and graph timers queue the start delay right before each start event (the GPU busy while
// the host enqueues the forward); the CPU backend and the cupti timer never do; 0 turns it off.
TEST(MeasureLoop, start_delay_precedes_every_start_event_on_a_gpu) {
  for (TimerKind timer : {TimerKind::events, TimerKind::graph}) {
    LoopRun r;
    r.w.kind = BackendKind::cuda;
    r.w.can_capture = true;
    MeasureSettings s = settings(4, 0.0, 100.0);
    s.max_samples = 4;
    s.timer = timer;
    s.start_delay_ms = 0.35;
    r.go(s);
    EXPECT_EQ(r.m.gpu.samples, 4);
    EXPECT_EQ(r.w.count("delay"), 4);
    for (std::size_t i = 0; i < r.w.log.size(); ++i)
      if (r.w.log[i] == "start") {
        EXPECT_TRUE(i > 0 && r.w.log[i - 1] == "delay");
      }
    for (double d : r.w.delays_ms) EXPECT_NEAR(d, 0.35, 1e-12);
    // After the flush and its synchronize: the delay is the last thing queued before the timed region.
    auto first = std::find(r.w.log.begin(), r.w.log.end(), std::string("delay"));
    EXPECT_TRUE(first != r.w.log.begin() && *(first - 1) == "sync");
  }
  for (BackendKind kind : {BackendKind::cpu, BackendKind::cuda}) {
    LoopRun off;
    off.w.kind = kind;
    MeasureSettings s = settings(3, 0.0, 100.0);
    s.max_samples = 3;
    s.start_delay_ms = kind == BackendKind::cuda ? 0.0 : 0.2;  // off on the GPU; the CPU ignores it
    off.go(s);
    EXPECT_EQ(off.w.count("start"), 3);
    EXPECT_EQ(off.w.count("delay"), 0);
  }
  LoopRun cupti;
  cupti.w.kind = BackendKind::cuda;
  cupti.w.cupti_ms = 0.5;
  MeasureSettings s = settings(3, 0.0, 100.0);
  s.max_samples = 3;
  s.timer = TimerKind::cupti;
  cupti.go(s);
  EXPECT_EQ(cupti.m.timer, std::string("cupti"));
  EXPECT_EQ(cupti.w.count("delay"), 0);  // kernel durations: nothing to hide
}

TEST(MeasureLoop, noisy_series_stops_at_max_time) {
  LoopRun r;
  r.w.gpu_script = {1.0, 2.0};  // noise ~0.33, never under 2%
  r.go(settings(5, 0.02, 0.1));
  EXPECT_EQ(r.m.stop_reason, std::string("max_time"));
  // The clock advances only by the GPU samples: 1+2+1+... reaches 100 ms at the 67th sample.
  EXPECT_EQ(r.m.gpu.samples, 67);
  std::vector<double> expected;
  for (int i = 0; i < 67; ++i) expected.push_back(i % 2 ? 2.0 : 1.0);  // 34 ones, 33 twos
  Stats e = compute_stats(expected);
  EXPECT_NEAR(r.m.gpu.noise, e.noise, 1e-12);
  EXPECT_TRUE(r.m.gpu.noise > 0.3);
  EXPECT_NEAR(r.m.gpu.median, 1.0, 1e-12);
  EXPECT_NEAR(r.m.gpu.mean, 100.0 / 67.0, 1e-12);
}

TEST(MeasureLoop, quiet_series_stops_exactly_at_min_samples) {
  LoopRun r;
  r.w.gpu_script = {1.0, 1.001};
  r.go(settings(10, 0.02, 100.0));
  EXPECT_EQ(r.m.stop_reason, std::string("noise"));
  EXPECT_EQ(r.m.gpu.samples, 10);
  EXPECT_EQ(r.w.count("start"), 10);
  EXPECT_NEAR(r.m.gpu.median, 1.0005, 1e-12);
  EXPECT_TRUE(r.m.gpu.noise < 0.001);
}

TEST(MeasureLoop, max_noise_below_the_series_noise_keeps_sampling) {
  LoopRun r;
  r.w.gpu_script = {1.0, 1.001};  // noise ~0.0005
  r.go(settings(10, 0.0001, 0.5));
  EXPECT_EQ(r.m.stop_reason, std::string("max_time"));
  EXPECT_TRUE(r.m.gpu.samples > 10);
}

TEST(MeasureLoop, max_samples_caps) {
  LoopRun r;
  r.w.gpu_script = {1.0, 3.0};
  MeasureSettings s = settings(5, 0.02, 1000.0);
  s.max_samples = 25;
  r.go(s);
  EXPECT_EQ(r.m.stop_reason, std::string("max_samples"));
  EXPECT_EQ(r.m.gpu.samples, 25);
  EXPECT_EQ(r.m.host.samples, 25);
}

TEST(MeasureLoop, cold_flushes_once_per_sample_outside_the_timed_region) {
  LoopRun r;
  r.go(settings(7, 0.02, 100.0));
  EXPECT_EQ(r.m.gpu.samples, 7);
  EXPECT_EQ(r.w.count("flush"), 7);
  EXPECT_EQ(r.forwards_before_first_sample(), 3);  // warm-up honoured
  EXPECT_EQ(r.w.count("fwd"), 3 + 7);
  // Every timed region (start..stop) holds exactly one forward and no flush; a flush precedes every start.
  // The GPU is idle again (synchronize) between the flush and the start, as in hot mode.
  bool inside = false, synced_since_flush = false;
  int fwd_inside = 0, flush_since_stop = 0;
  for (const auto& e : r.w.log) {
    if (e == "sync") synced_since_flush = true;
    if (e == "start") {
      EXPECT_TRUE(!inside);
      EXPECT_EQ(flush_since_stop, 1);
      EXPECT_TRUE(synced_since_flush);
      inside = true;
      fwd_inside = 0;
    } else if (e == "stop") {
      EXPECT_EQ(fwd_inside, 1);
      inside = false;
      flush_since_stop = 0;
    } else if (e == "fwd") {
      if (inside) ++fwd_inside;
    } else if (e == "flush") {
      EXPECT_TRUE(!inside);
      ++flush_since_stop;
      synced_since_flush = false;
    }
  }
}

TEST(MeasureLoop, hot_never_flushes) {
  LoopRun r;
  MeasureSettings s = settings(7, 0.02, 100.0);
  s.hot = true;
  s.warmup = 5;
  r.go(s);
  EXPECT_EQ(r.m.gpu.samples, 7);
  EXPECT_EQ(r.w.count("flush"), 0);
  EXPECT_EQ(r.forwards_before_first_sample(), 5);
  EXPECT_EQ(r.w.count("fwd"), 5 + 7);
}

// A forward that takes seconds is warmed once: the first warm-up forward is timed, and the other two would not fit
// in max_time; one just under the budget keeps all three.
TEST(MeasureLoop, a_slow_forward_is_warmed_once) {
  for (double ms : {2000.0, 400.0}) {
    LoopRun r;
    MeasureSettings s = settings(10, 0.02, 1.0);
    s.hot = true;
    r.w.host_ms_per_forward = ms;
    r.go(s);
    EXPECT_EQ(r.forwards_before_first_sample(), ms > 500 ? 1 : 3) << ms;
  }
}

TEST(MeasureLoop, zero_warmup) {
  LoopRun r;
  MeasureSettings s = settings(4, 0.02, 100.0);
  s.warmup = 0;
  r.go(s);
  EXPECT_EQ(r.forwards_before_first_sample(), 0);
  EXPECT_EQ(r.w.count("fwd"), 4);
}

TEST(MeasureLoop, graph_falls_back_to_events_when_capture_is_unavailable) {
  LoopRun r;
  MeasureSettings s = settings(5, 0.02, 100.0);
  s.timer = TimerKind::graph;
  r.go(s);
  EXPECT_EQ(r.m.timer, std::string("events"));
  EXPECT_TRUE(has_warning(r.m, "graph capture unavailable on cpu: timed with events"));
  EXPECT_EQ(r.w.count("fwd"), 3 + 5);
  EXPECT_EQ(r.w.count("replay"), 0);
}

TEST(MeasureLoop, graph_falls_back_when_capture_throws) {
  LoopRun r;
  r.w.capture_throws = true;
  MeasureSettings s = settings(5, 0.02, 100.0);
  s.timer = TimerKind::graph;
  r.go(s);
  EXPECT_EQ(r.m.timer, std::string("events"));
  ASSERT_TRUE(r.m.warnings.size() == 1);
  EXPECT_TRUE(r.m.warnings[0].find("graph capture unavailable on cpu (") == 0);
  EXPECT_TRUE(r.m.warnings[0].find("timed with events") != std::string::npos);
}

TEST(MeasureLoop, graph_times_replays) {
  LoopRun r;
  r.w.can_capture = true;
  r.w.host_ms_per_forward = 0.5;
  MeasureSettings s = settings(6, 0.02, 100.0);
  s.timer = TimerKind::graph;
  r.go(s);
  EXPECT_EQ(r.m.timer, std::string("graph"));
  EXPECT_TRUE(r.m.warnings.empty());
  EXPECT_EQ(r.w.count("fwd"), 3);         // warm-up only: samples replay the graph
  EXPECT_EQ(r.w.count("replay"), 1 + 6);  // one untimed upload replay, then one per sample
  EXPECT_NEAR(r.m.host.median, 0.5, 1e-9);
}

TEST(MeasureLoop, graph_with_zero_warmup_primes_one_eager_forward) {
  LoopRun r;
  r.w.can_capture = true;
  MeasureSettings s = settings(3, 0.02, 100.0);
  s.timer = TimerKind::graph;
  s.warmup = 0;
  r.go(s);
  EXPECT_EQ(r.m.timer, std::string("graph"));
  EXPECT_EQ(r.w.count("fwd"), 1);
}

TEST(MeasureLoop, cupti_uses_kernel_time) {
  LoopRun r;
  r.w.cupti_ms = 0.25;
  r.w.gpu_script = {9.0};  // the event timer's value must not be what is reported
  MeasureSettings s = settings(5, 0.02, 100.0);
  s.timer = TimerKind::cupti;
  r.go(s);
  EXPECT_EQ(r.m.timer, std::string("cupti"));
  EXPECT_NEAR(r.m.gpu.median, 0.25, 1e-12);
  EXPECT_EQ(r.m.gpu.samples, 5);
  EXPECT_EQ(r.w.count("count+"), 1 + 5);  // probe + samples
  EXPECT_EQ(r.w.count("start"), 0);
}

TEST(MeasureLoop, cupti_falls_back_to_events_without_kernel_time) {
  LoopRun r;
  r.w.cupti_ms = 0;
  r.w.gpu_script = {2.0};
  MeasureSettings s = settings(5, 0.02, 100.0);
  s.timer = TimerKind::cupti;
  r.go(s);
  EXPECT_EQ(r.m.timer, std::string("events"));
  EXPECT_TRUE(has_warning(r.m, "cupti kernel time unavailable on cpu: timed with events"));
  EXPECT_NEAR(r.m.gpu.median, 2.0, 1e-12);
}

TEST(MeasureLoop, host_time_is_the_enqueue_alone) {
  LoopRun r;
  r.w.host_ms_per_forward = 0.3;
  r.w.timer_call_ms = 0.05;  // the timer's own calls are not in host_ms either
  r.w.gpu_script = {1.0};
  r.go(settings(5, 0.02, 100.0));
  EXPECT_NEAR(r.m.host.median, 0.3, 1e-9);
  EXPECT_NEAR(r.m.host.max, 0.3, 1e-9);  // the GPU wait (1 ms on the fake clock) is not in it
  EXPECT_NEAR(r.m.gpu.median, 1.0, 1e-12);
}

TEST(MeasureLoop, throttling_warning_when_clock_is_low) {
  LoopRun r;
  r.w.sm_clock = 1100;
  r.go(settings(5, 0.02, 100.0));
  EXPECT_EQ(r.m.sm_clock_mhz, 1100);
  EXPECT_TRUE(has_warning(r.m, "SM clock 1100 MHz is 56% of its 1980 MHz maximum: the GPU may be throttling"));
  EXPECT_TRUE(r.w.count("clock") >= 1);
  // Clock reads happen inside the sample, after the stop event, not inside the timed region.
  bool inside = false;
  for (const auto& e : r.w.log) {
    if (e == "start") inside = true;
    if (e == "stop") inside = false;
    if (e == "clock") EXPECT_TRUE(!inside);
  }
}

TEST(MeasureLoop, no_throttling_warning_at_full_clock) {
  LoopRun r;
  r.w.sm_clock = 1950;
  r.go(settings(5, 0.02, 100.0));
  EXPECT_EQ(r.m.sm_clock_mhz, 1950);
  EXPECT_TRUE(r.m.warnings.empty());
  LoopRun unknown;  // clock 0: unknown, no reading, no warning
  unknown.go(settings(5, 0.02, 100.0));
  EXPECT_EQ(unknown.m.sm_clock_mhz, 0);
  EXPECT_TRUE(unknown.m.warnings.empty());
}

TEST(MeasureLoop, keep_samples_in_order) {
  LoopRun r;
  r.w.gpu_script = {1.0, 1.001, 1.002};
  MeasureSettings s = settings(4, 0.02, 100.0);
  s.keep_samples = true;
  r.go(s);
  EXPECT_TRUE(r.m.samples == (std::vector<double>{1.0, 1.001, 1.002, 1.0}));
  nlohmann::json j = rounds_to_json({r.m}, s, 0);
  EXPECT_EQ(j["samples_ms"].size(), std::size_t(4));
  EXPECT_EQ(j["stop_reason"].get<std::string>(), std::string("noise"));
  EXPECT_EQ(j["timer"].get<std::string>(), std::string("events"));
  EXPECT_TRUE(j["time_ms"].contains("noise"));
  LoopRun r2;
  MeasureSettings s2 = settings(4, 0.02, 100.0);
  r2.go(s2);
  EXPECT_EQ(r2.m.samples.size(), std::size_t(4));  // kept for combining rounds, written only when asked
  EXPECT_TRUE(!rounds_to_json({r2.m}, s2, 0).contains("samples_ms"));
}

TEST(MeasureLoop, invalid_settings_throw_before_running) {
  LoopRun r;
  MeasureSettings s = settings(0, 0.02, 1.0);
  EXPECT_ANY_THROW(r.go(s));
  EXPECT_TRUE(r.w.log.empty());
}

TEST(MeasureLoop, a_slow_forward_gets_one_sample_then_max_time) {
  LoopRun r;
  r.w.gpu_script = {5000.0};  // 5 s per forward, budget 1 s
  r.go(settings(10, 0.02, 1.0));
  EXPECT_EQ(r.m.gpu.samples, 1);
  EXPECT_EQ(r.m.stop_reason, std::string("max_time"));
}


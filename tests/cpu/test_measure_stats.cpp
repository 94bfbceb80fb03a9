// Measurement engine, pure parts: statistics, the stopping rule, settings/Stats JSON, timer names, clock warning.
#include <cmath>
#include <random>
#include <set>

#include "core/errors.hpp"
#include "measure/clock_monitor.hpp"
#include "measure/measure.hpp"
#include "measure/stats.hpp"
#include "measure/stopping_rule.hpp"
#include "testing.hpp"

using namespace ab;

TEST(MeasureStats, stats_odd_count) {
  Stats s = compute_stats({3.0, 1.0, 2.0});
  EXPECT_EQ(s.samples, 3);
  EXPECT_NEAR(s.median, 2.0, 1e-12);
  EXPECT_NEAR(s.mean, 2.0, 1e-12);
  EXPECT_NEAR(s.min, 1.0, 1e-12);
  EXPECT_NEAR(s.max, 3.0, 1e-12);
  EXPECT_NEAR(s.stdev, 1.0, 1e-12);  // sample stdev: sqrt((1+0+1)/2)
  EXPECT_NEAR(s.noise, 0.5, 1e-12);
}

TEST(MeasureStats, stats_even_count) {
  Stats s = compute_stats({4.0, 1.0, 3.0, 2.0});
  EXPECT_NEAR(s.median, 2.5, 1e-12);  // mean of the two middle values
  EXPECT_NEAR(s.mean, 2.5, 1e-12);
  EXPECT_NEAR(s.stdev, std::sqrt(5.0 / 3.0), 1e-12);
  EXPECT_NEAR(s.noise, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);
  EXPECT_EQ(s.samples, 4);
}

TEST(MeasureStats, stats_median_is_robust_to_one_outlier) {
  Stats s = compute_stats({1.0, 1.0, 1.0, 1.0, 100.0});
  EXPECT_NEAR(s.median, 1.0, 1e-12);
  EXPECT_NEAR(s.mean, 20.8, 1e-12);
  EXPECT_NEAR(s.max, 100.0, 1e-12);
}

TEST(MeasureStats, stats_empty_and_single) {
  Stats e = compute_stats({});
  EXPECT_EQ(e.samples, 0);
  EXPECT_EQ(e.median, 0.0);
  EXPECT_EQ(e.noise, 0.0);  // no series at all: the zero Stats
  Stats one = compute_stats({0.7});
  EXPECT_EQ(one.samples, 1);
  EXPECT_NEAR(one.median, 0.7, 1e-12);
  EXPECT_EQ(one.stdev, 0.0);
  EXPECT_TRUE(std::isnan(one.noise));  // one sample has no spread: unknown, not 0
  EXPECT_TRUE(Stats(one).to_json()["noise"].is_null());
}

TEST(MeasureStats, running_stats_match_compute_stats) {
  std::mt19937 rng(7);
  std::lognormal_distribution<double> d(0.0, 0.3);
  std::vector<double> xs;
  RunningStats r;
  for (int i = 0; i < 500; ++i) {
    xs.push_back(d(rng));
    r.add(xs.back());
  }
  Stats s = compute_stats(xs);
  EXPECT_EQ(r.count(), s.samples);
  EXPECT_NEAR(r.mean(), s.mean, 1e-12);
  EXPECT_NEAR(r.stdev(), s.stdev, 1e-12);
  EXPECT_NEAR(r.noise(), s.noise, 1e-12);
  EXPECT_TRUE(s.noise > 0.1);  // a real spread, so the comparison means something
}

TEST(MeasureStats, stats_json_keys) {
  nlohmann::json j = compute_stats({1.0, 2.0}).to_json();
  std::set<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.insert(it.key());
  EXPECT_TRUE(keys == (std::set<std::string>{"median", "mean", "min", "max", "stdev", "noise", "samples"}));
  EXPECT_EQ(j["samples"].get<int>(), 2);
  EXPECT_NEAR(j["median"].get<double>(), 1.5, 1e-12);
}

TEST(MeasureStats, settings_json) {
  MeasureSettings s;
  s.hot = true;
  s.timer = TimerKind::graph;
  s.warmup = 5;
  nlohmann::json j = s.to_json();
  std::set<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.insert(it.key());
  EXPECT_TRUE(keys == (std::set<std::string>{"warmup", "min_samples", "max_samples", "max_noise", "max_time_s", "hot",
                                       "l2_flush", "timer", "keep_samples", "rounds", "start_delay_ms"}));
  EXPECT_EQ(j["hot"].get<bool>(), true);
  EXPECT_EQ(j["l2_flush"].get<bool>(), false);
  EXPECT_EQ(j["timer"].get<std::string>(), std::string("graph"));
  EXPECT_EQ(j["warmup"].get<int>(), 5);
  s.hot = false;
  EXPECT_EQ(s.to_json()["l2_flush"].get<bool>(), true);
}

TEST(MeasureStats, timer_kind_names) {
  for (TimerKind k : {TimerKind::events, TimerKind::graph, TimerKind::cupti}) {
    TimerKind back = k == TimerKind::events ? TimerKind::cupti : TimerKind::events;
    EXPECT_TRUE(parse_timer_kind(timer_kind_name(k), &back));
    EXPECT_TRUE(back == k);
  }
  EXPECT_EQ(std::string(timer_kind_name(TimerKind::cupti)), std::string("cupti"));
  TimerKind k = TimerKind::graph;
  EXPECT_TRUE(!parse_timer_kind("event", &k));
  EXPECT_TRUE(!parse_timer_kind("", &k));
  EXPECT_TRUE(k == TimerKind::graph);  // untouched on failure
}

TEST(MeasureStats, validate_settings) {
  MeasureSettings ok;
  validate_measure_settings(ok);
  MeasureSettings s = ok;
  s.min_samples = 0;
  EXPECT_ANY_THROW(validate_measure_settings(s));
  s = ok;
  s.max_samples = 0;
  EXPECT_ANY_THROW(validate_measure_settings(s));
  s = ok;
  s.warmup = -1;
  EXPECT_ANY_THROW(validate_measure_settings(s));
  s = ok;
  s.max_noise = -0.1;
  EXPECT_ANY_THROW(validate_measure_settings(s));
  s = ok;
  s.max_time_s = 0;
  EXPECT_ANY_THROW(validate_measure_settings(s));
  s = ok;
  s.max_time_s = NAN;
  EXPECT_ANY_THROW(validate_measure_settings(s));
  s = ok;
  s.start_delay_ms = -0.1;
  EXPECT_ANY_THROW(validate_measure_settings(s));
  s.start_delay_ms = NAN;
  EXPECT_ANY_THROW(validate_measure_settings(s));
  s.start_delay_ms = kMaxStartDelayMs + 1;
  EXPECT_ANY_THROW(validate_measure_settings(s));
  s.start_delay_ms = 0;  // off: allowed
  validate_measure_settings(s);
  s = ok;
  s.min_samples = 50;
  s.max_samples = 10;  // allowed: the cap wins
  validate_measure_settings(s);
}

// ---- the stopping rule --------------------------------------------------------------------------------

MeasureSettings rule(int min_samples, double max_noise, double max_time_s, int max_samples = 100000) {
  MeasureSettings s;
  s.min_samples = min_samples;
  s.max_noise = max_noise;
  s.max_time_s = max_time_s;
  s.max_samples = max_samples;
  return s;
}

TEST(MeasureStats, stop_quiet_series_at_min_samples) {
  MeasureSettings s = rule(5, 0.02, 10.0);
  std::vector<double> xs;
  for (int i = 0; i < 4; ++i) {
    xs.push_back(1.0 + 0.001 * (i % 2));
    EXPECT_TRUE(!decide_stop(xs, 0.01 * i, s).stop);  // quiet, but below min_samples
  }
  xs.push_back(1.0);
  StopDecision d = decide_stop(xs, 0.05, s);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, std::string("noise"));
}

TEST(MeasureStats, stop_noisy_series_runs_to_max_time) {
  MeasureSettings s = rule(5, 0.02, 1.0);
  std::vector<double> xs;
  for (int i = 0; i < 200; ++i) xs.push_back(i % 2 ? 2.0 : 1.0);
  EXPECT_TRUE(!decide_stop(xs, 0.999, s).stop);
  StopDecision d = decide_stop(xs, 1.0, s);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, std::string("max_time"));
}

TEST(MeasureStats, stop_threshold_is_inclusive_and_uses_relative_stdev) {
  std::vector<double> xs = {9.0, 11.0};  // stdev sqrt(2), mean 10: noise 0.1414
  EXPECT_TRUE(!decide_stop(xs, 0, rule(2, 0.14, 10)).stop);
  EXPECT_TRUE(decide_stop(xs, 0, rule(2, 0.1415, 10)).stop);
  EXPECT_TRUE(decide_stop(2, 0.05, 0, rule(2, 0.05, 10)).stop);  // at the limit stops ("at or under")
}

TEST(MeasureStats, stop_max_time_below_min_samples) {
  StopDecision d = decide_stop({50.0}, 3.5, rule(10, 0.02, 3.0));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, std::string("max_time"));
}

TEST(MeasureStats, stop_precedence) {
  // Converged and out of time at once: noise wins.
  EXPECT_EQ(decide_stop(10, 0.001, 5.0, rule(10, 0.02, 3.0)).reason, std::string("noise"));
  // Cap and time at once: max_samples.
  EXPECT_EQ(decide_stop(20, 0.5, 5.0, rule(10, 0.02, 3.0, 20)).reason, std::string("max_samples"));
  // Cap below min_samples caps.
  StopDecision d = decide_stop(3, 0.0, 0.0, rule(10, 0.02, 3.0, 3));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, std::string("max_samples"));
  // Nothing sampled: never stop.
  EXPECT_TRUE(!decide_stop(0, 0.0, 100.0, rule(1, 0.02, 3.0)).stop);
  EXPECT_TRUE(decide_stop(0, 0.0, 100.0, rule(1, 0.02, 3.0)).reason.empty());
}

// ---- clocks -----------------------------------------------------------------------------------------

TEST(MeasureStats, throttle_warning_text) {
  EXPECT_EQ(throttle_warning(1100, 1980),
           std::string("SM clock 1100 MHz is 56% of its 1980 MHz maximum: the GPU may be throttling"));
  EXPECT_TRUE(throttle_warning(1700, 1980).empty());  // 86%
  EXPECT_TRUE(!throttle_warning(1583, 1980).empty());  // 79.9%
  EXPECT_TRUE(throttle_warning(0, 1980).empty());     // unknown clock
  EXPECT_TRUE(throttle_warning(1100, 0).empty());     // unknown maximum
}

TEST(MeasureStats, clock_monitor_schedule_and_median) {
  ClockMonitor m(0.25);
  std::vector<std::int64_t> due;
  for (std::int64_t n = 1; n <= 20; ++n)
    if (m.due(n, 0.0)) {
      due.push_back(n);
      m.record(1000 + static_cast<int>(n), 0.0);
    }
  EXPECT_TRUE(due == (std::vector<std::int64_t>{1, 2, 4, 8, 16}));
  EXPECT_TRUE(m.due(21, 0.3));  // the period passed since the last read
  EXPECT_TRUE(!m.due(21, 0.2));
  m.record(0, 0.3);  // unknown: dropped
  EXPECT_EQ(m.readings().size(), std::size_t(5));
  EXPECT_EQ(m.observed_mhz(), 1004);  // median of 1001 1002 1004 1008 1016
  ClockMonitor empty;
  EXPECT_EQ(empty.observed_mhz(), 0);
}

TEST(MeasureStats, one_sample_never_meets_the_noise_target) {
  // --min_samples=1 used to stop after one sample with "noise" and claim 0% noise.
  StopDecision d = decide_stop({0.5}, 0.0, rule(1, 0.02, 10.0));
  EXPECT_TRUE(!d.stop);
  d = decide_stop({0.5}, 0.0, rule(1, 0.02, 10.0, 1));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, std::string("max_samples"));
  EXPECT_EQ(decide_stop(1, 0.0, 0.0, rule(1, 0.02, 10.0)).stop, false);
  EXPECT_EQ(decide_stop({0.5, 0.5}, 0.0, rule(1, 0.02, 10.0)).reason, std::string("noise"));
}

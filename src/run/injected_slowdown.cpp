// Parsing ATTNBENCH_INJECT_SLOWDOWN and calibrating the injected delay.
#include "run/injected_slowdown.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "measure/rounds.hpp"

namespace ab {

namespace {

double parse_one(const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  double v = std::strtod(s, &end);
  std::string rest = end == s ? text : std::string(end);
  if (end == s || !(rest.empty() || rest == "%") || !std::isfinite(v))
    throw UsageError(fmt::format("ATTNBENCH_INJECT_SLOWDOWN: '{}' is not a fraction (0.05) or a percentage (5%)", text));
  if (rest == "%") v /= 100;
  if (v < 0 || v > 10) throw UsageError(fmt::format("ATTNBENCH_INJECT_SLOWDOWN: '{}' is outside 0 to 1000%", text));
  return v;
}

}  // namespace

SlowdownSpec parse_slowdown(const std::string& text) {
  SlowdownSpec spec;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::size_t eq = item.find('=');
    std::string name = eq == std::string::npos ? "*" : item.substr(0, eq);
    if (name.empty()) throw UsageError(fmt::format("ATTNBENCH_INJECT_SLOWDOWN: '{}' names no strategy", item));
    spec[name] = parse_one(eq == std::string::npos ? item : item.substr(eq + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return spec;
}

double slowdown_for(const SlowdownSpec& spec, const std::string& strategy) {
  auto it = spec.find(strategy);
  if (it != spec.end()) return it->second;
  it = spec.find("*");
  return it != spec.end() ? it->second : 0.0;
}

nlohmann::json InjectedDelay::to_json() const {
  return {{"fraction", fraction}, {"delay_ms", delay_ms}, {"base_ms", base_ms}, {"achieved", achieved}};
}

InjectedDelay calibrate_delay(const TimedDevice& device, const std::function<void()>& forward, double fraction,
                              const MeasureSettings& s) {
  MeasureSettings q = s;
  q.min_samples = std::max(s.min_samples, 20);
  q.max_time_s = std::min(s.max_time_s, 0.5);
  q.warmup = std::max(s.warmup, 1);
  // Each time is the center (center_of_rounds) of kPairs short series, taken alternately with and without
  // the delay, so that a burst of slower running cannot set the delay.
  constexpr int kPairs = 4;
  auto base_and_delayed = [&](double ms) {
    std::vector<double> base, delayed;
    for (int i = 0; i < kPairs; ++i) {
      base.push_back(measure_forward(device, forward, q).gpu.median);
      delayed.push_back(measure_forward(device, [&] { forward(); device.profiler.enqueue_delay(ms); }, q).gpu.median);
    }
    return std::make_pair(center_of_rounds(base), center_of_rounds(delayed));
  };
  InjectedDelay d;
  d.fraction = fraction;
  const double first_guess = fraction * measure_forward(device, forward, q).gpu.median;
  auto [base, with_delay] = base_and_delayed(first_guess);
  d.base_ms = base;
  d.delay_ms = std::max(0.0, first_guess + (1 + fraction) * base - with_delay);
  auto [base_again, with_final] = base_and_delayed(d.delay_ms);
  d.achieved = with_final / base_again - 1;
  return d;
}

}  // namespace ab

// Measurement flag limits shared by run and tune.
#include "cli/flag_values.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace ab {

CLI::Validator non_negative_integer() {
  return CLI::Validator(
      [](std::string& s) { return s.find('-') != std::string::npos ? "must be 0 or more, got " + s : std::string(); },
      "UINT");
}

double parse_max_time(const std::string& text, double fallback) {
  if (text.empty()) return fallback;
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos == 0 || pos != text.size()) throw UsageError(fmt::format("--max_time: '{}' is not a number of seconds", text));
  if (!std::isfinite(v) || !(v > 0) || v > kMaxTimeSeconds)
    throw UsageError(fmt::format("--max_time: '{}' must be a number of seconds above 0 and at most {:g}", text, kMaxTimeSeconds));
  return v;
}

void check_sample_flags(int warmup, int min_samples, int max_samples) {
  if (warmup < -1 || warmup > kMaxWarmup)
    throw UsageError(fmt::format("--warmup must be between 0 and {}, got {}", kMaxWarmup, warmup));
  if (min_samples == 0 || min_samples < -1) throw UsageError(fmt::format("--min_samples must be >= 1, got {}", min_samples));
  if (max_samples > 0 && min_samples > max_samples)
    throw UsageError(fmt::format("--min_samples={} is above --max_samples={}", min_samples, max_samples));
}

}  // namespace ab

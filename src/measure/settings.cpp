// MeasureSettings: validation and the report's "settings" JSON.
#include <cmath>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "measure/measure.hpp"

namespace ab {

void validate_measure_settings(const MeasureSettings& s) {
  if (s.warmup < 0) throw UsageError(fmt::format("warmup must be >= 0, got {}", s.warmup));
  if (s.min_samples < 1) throw UsageError(fmt::format("min_samples must be >= 1, got {}", s.min_samples));
  if (s.max_samples < 1) throw UsageError(fmt::format("max_samples must be >= 1, got {}", s.max_samples));
  if (!std::isfinite(s.max_noise) || s.max_noise < 0)
    throw UsageError(fmt::format("max_noise must be a finite number >= 0, got {}", s.max_noise));
  if (s.rounds < 1 || s.rounds > kMaxRounds)
    throw UsageError(fmt::format("rounds must be between 1 and {}, got {}", kMaxRounds, s.rounds));
  if (!std::isfinite(s.max_time_s) || s.max_time_s <= 0)
    throw UsageError(fmt::format("max_time must be a finite number of seconds > 0, got {}", s.max_time_s));
  if (!std::isfinite(s.start_delay_ms) || s.start_delay_ms < 0 || s.start_delay_ms > kMaxStartDelayMs)
    throw UsageError(fmt::format("start_delay must be between 0 and {} ms, got {}", kMaxStartDelayMs, s.start_delay_ms));
}

nlohmann::json MeasureSettings::to_json() const {
  return {{"warmup", warmup},       {"min_samples", min_samples}, {"max_samples", max_samples},
          {"max_noise", max_noise}, {"max_time_s", max_time_s},   {"hot", hot},
          {"l2_flush", !hot},       {"timer", timer_kind_name(timer)}, {"keep_samples", keep_samples},
          {"rounds", rounds},       {"start_delay_ms", start_delay_ms}};
}

}  // namespace ab

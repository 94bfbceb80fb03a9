// Limits and parsers of the measurement flags that `run` and `tune` share, each defined once.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace ab {

inline constexpr int kMaxWarmup = 10000;          // untimed forwards per point
inline constexpr double kMaxTimeSeconds = 86400;  // --max_time: a day per point at most

// For unsigned flags (--seed): CLI11 would wrap "-1" to 2^64-1; this refuses a leading minus sign.
CLI::Validator non_negative_integer();
// --max_time: "" gives `fallback`; else a finite number of seconds, > 0 and <= kMaxTimeSeconds.
double parse_max_time(const std::string& text, double fallback);
// --warmup (-1: the default) in [0, kMaxWarmup]; --min_samples (-1: the default) >= 1 and, when
// max_samples > 0, not above it. Throws UsageError naming the flag.
void check_sample_flags(int warmup, int min_samples, int max_samples);

}  // namespace ab

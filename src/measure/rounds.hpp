// Rounds: several measurements of one forward, each with its own warm-up and (on a GPU) its own memory
// placement, combined into one result row; and the uncertainty of the row's median that `compare` uses.
//
// Why: a median moves between processes by more than its within-run noise says (on an H200, 0.4-3% from
// run to run at noise 0.5-1%), mostly with where the inputs land in device memory. Rounds on fresh
// placements let one invocation see that spread and average over it (docs/ci-gate.md).
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/measure.hpp"

namespace ab {

// Fewest rounds whose spread says anything about between-round variation; with fewer, compare falls back to
// the within-run noise.
inline constexpr int kMinRoundsForSpread = 4;

// A row's SM clock is "low" below this fraction of the device's maximum (the throttling warning's bound).
inline constexpr double kLowClockFraction = 0.8;

// The row's center over its rounds: the mean of the fastest quarter of the round medians (the faster
// ceil(R/4)). Interference only ever adds time, and on an H200 it comes in bursts of seconds (nested's graph
// of 1153 kernels runs 7% slower for several rounds in a row, then recovers) and in slower spells of a few
// percent, so the fastest rounds are what repeats from run to run; averaging several of them keeps one lucky
// round from setting the number. Measured on an H200 over 10 runs of the CI suite and the default command
// (20 rounds each), the worst row's center moved by 1.3% and 1.6% between runs with this rule, 2.3% and 3.3%
// with the fastest half, 5.3% and 7.3% with the median of the rounds (docs/ci-gate.md). NaN for none.
double center_of_rounds(std::vector<double> medians);
// How many round medians the center averages: ceil(R/4).
std::int64_t rounds_kept(std::int64_t rounds);
// Relative standard error of the center: the relative spread (stdev / mean) of the kept medians over
// sqrt(kept). NaN with fewer than 2 kept.
double center_of_rounds_error(const std::vector<double>& medians);

// rounds: a row's summary of its rounds, present with more than one round.
struct RoundsSummary {
  std::int64_t count = 0;
  std::vector<double> medians_ms;  // in the order they ran
  double spread = NAN;             // stdev / mean of all the medians
  std::int64_t kept = 0;           // rounds_kept(count)
  double error = NAN;              // center_of_rounds_error
};

// The typed timing fields of a result row (docs/report-format.md); combine_rounds says how they are made.
struct RowTiming {
  Stats time_ms, host_ms;
  std::string timer, stop_reason;
  std::optional<bool> noise_met;  // unset only in rows read from reports older than the field
  int sm_clock_mhz = 0;  // 0 unknown
  bool clock_low = false;
  std::optional<RoundsSummary> rounds;            // more than one round
  std::optional<std::vector<double>> samples_ms;  // with keep_samples
};

// The timing fields of a result row (docs/report-format.md) from one or more rounds, in order:
//   time_ms   statistics over every sample of every round; with more than one round, `median` is the rounds'
//             center (center_of_rounds: each round counts once, however many samples it took);
//   host_ms   the same over host times; timer (the first round's); stop_reason (the first round's that did
//             not stop on noise, else "noise");
//   noise_met every round stopped because its noise reached the target (false: a time or sample limit
//             ended a round with its noise above target);
//   sm_clock_mhz the median of the rounds' observed clocks (0 unknown) and clock_low when it is below
//             kLowClockFraction of `max_clock_mhz` (both known);
//   rounds    {count, medians_ms (in the order they ran), spread (stdev / mean of all the medians), kept
//             (rounds_kept), error (center_of_rounds_error)} with more than one round;
//   samples_ms every sample, rounds concatenated, when s.keep_samples.
// Throws std::invalid_argument for no rounds.
RowTiming combine_rounds(const std::vector<Measurement>& rounds, const MeasureSettings& s, int max_clock_mhz);
// The timing fields as report JSON (the row's writer, run/result_row_json.cpp, merges them into the row).
nlohmann::json to_json(const RowTiming& t);
// to_json(combine_rounds(...)).
nlohmann::json rounds_to_json(const std::vector<Measurement>& rounds, const MeasureSettings& s, int max_clock_mhz);

}  // namespace ab

// Rounds: several measurements of one forward, each with its own warm-up and (on a GPU) its own memory
// placement, combined into one result row; and the uncertainty of the row's median that `compare` uses.
//
// Why: a median moves between processes by more than its within-run noise says (on an H200, 0.4-3% from
// run to run at noise 0.5-1%), mostly with where the inputs land in device memory. Rounds on fresh
// placements let one invocation see that spread and average over it (docs/ci-gate.md).
#pragma once
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/measure.hpp"

namespace ab {

// Fewest rounds whose spread says anything about between-round variation; with fewer, compare falls back to
// the within-run noise.
inline constexpr int kMinRoundsForSpread = 3;

// A row's SM clock is "low" below this fraction of the device's maximum (the throttling warning's bound).
inline constexpr double kLowClockFraction = 0.8;

// How many of the lowest and of the highest round medians the row's center leaves out: a tenth of them, at
// least one each with 5 or more rounds, none below that.
std::int64_t rounds_trimmed(std::int64_t rounds);
// The row's center over its rounds: the mean of the round medians with rounds_trimmed of the lowest and of
// the highest left out (a round that met a passing disturbance cannot pull it). NaN for none.
double center_of_rounds(std::vector<double> medians);
// Relative standard error of that center, for rounds whose medians have relative spread `spread` (stdev /
// mean): spread / sqrt(rounds kept), which errs on the high side for a trimmed mean. NaN for rounds < 1.
double center_of_rounds_error(double spread, std::int64_t rounds);

// The timing fields of a result row (docs/report-format.md) from one or more rounds, in order:
//   time_ms   statistics over every sample of every round; with more than one round, `median` is the rounds'
//             center (center_of_rounds: each round counts once, however many samples it took);
//   host_ms   the same over host times; timer (the first round's); stop_reason (the first round's that did
//             not stop on noise, else "noise");
//   noise_met every round stopped because its noise reached the target (false: a time or sample limit
//             ended a round with its noise above target);
//   sm_clock_mhz the median of the rounds' observed clocks (0 unknown) and clock_low when it is below
//             kLowClockFraction of `max_clock_mhz` (both known);
//   rounds    {count, medians_ms, spread} with more than one round (spread: stdev / mean of the medians);
//   samples_ms every sample, rounds concatenated, when s.keep_samples.
// Throws std::invalid_argument for no rounds.
nlohmann::json rounds_to_json(const std::vector<Measurement>& rounds, const MeasureSettings& s, int max_clock_mhz);

}  // namespace ab

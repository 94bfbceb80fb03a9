// Comparing two typed reports (a baseline and a new run): rows matched by (problem, strategy),
// a verdict per row from the threshold and the noise both runs recorded, new/missing rows, status changes,
// and the exit code a CI perf gate uses.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/problem.hpp"
#include "run/run_report.hpp"

namespace ab {

// The default --threshold. Measured on an H200 (docs/ci-gate.md): with the gate's settings no unchanged row
// moved further than 2.47% between processes (10 runs, 1,350 comparisons), and every 5% slowdown measured
// beyond it.
inline constexpr double kDefaultThreshold = 0.03;

// The between-process allowance of a one-round row (issue 49). A row timed in one round (rounds absent or 1 on
// either side, as every run with default settings is) has no measure of how much its time moves from process
// to process, and that movement is larger than its within-run noise: on an H200, six runs of the main command
// (`--batch=32 --heads=12 --seq_len=512 --verify`) put `nested` at about 7.1 ms or at 8-10 ms from process to
// process (two speeds of its CUDA graph, docs/ci-gate.md), up to 1.41x apart, and compared pairwise reported
// a regression in 4 of 15 pairs of unchanged code, every time on nested (another six on an H200: nested at
// 6.71-7.23 ms, one slower and one faster row of 75 under the rule alone, none with this allowance). So a
// one-round row is `slower`/`faster` only when the two times differ by more than this factor (new/base or
// base/new), above nested's 1.41x with a margin;
// a smaller change that the threshold-and-noise rule calls slower or faster is `ambiguous` (one_round_note()),
// which never fails compare. Rows with at least two rounds on both sides keep the threshold-and-noise rule.
inline constexpr double kOneRoundAllowance = 1.5;

struct CompareOptions {
  double threshold = kDefaultThreshold;  // relative change of the median that matters
  double noise_k = 2.0;        // how many combined uncertainty units a change must exceed to be real
  bool ignore_device = false;  // compare reports from different devices
  bool fail_on_missing = false;  // a row of the baseline absent from the new run counts as a regression
  // Ratio of times a one-round row must exceed to be slower/faster; 1 or less turns the one-round rule off
  // (the rule before issue 49: tests/cpu/test_gate_rule.cpp's control uses it).
  double one_round_allowance = kOneRoundAllowance;
};

// faster/slower/same/ambiguous: both runs timed the row. worse/better/changed: the status changed (ranked
// ok > unsupported > incorrect = failed). n/a: neither run timed it and its status did not change.
enum class Verdict { faster, slower, same, ambiguous, worse, better, changed, not_applicable };
const char* verdict_name(Verdict v);

// One side of a row: what one report said about it.
struct CompareSide {
  std::string status, reason;
  double median_ms = NAN, noise = NAN;  // noise: within-run stdev / mean of the samples
  std::int64_t samples = -1;  // -1 when the report does not say
  std::int64_t rounds = 1;
  double spread = NAN;        // stdev / mean of the rounds' medians (rounds > 1)
  // Relative uncertainty of the median that the verdict uses: with at least kMinRoundsForSpread rounds,
  // the standard error of the rounds' center (rounds.error, center_of_rounds_error); otherwise the within-run
  // noise, which is all a single round has (+inf with fewer than kMinSamplesForNoise samples).
  double uncertainty = NAN;
  int noise_met = -1;         // 1, 0, -1 unknown
  int sm_clock_mhz = 0;
  bool clock_low = false;
  std::string library_version;  // a plugin or peer row's library version ("" for the built-ins, older reports)
};

struct CompareRow {
  Problem problem;
  std::string label, strategy;
  CompareSide base, next;  // "next" is the new run
  double change = NAN;     // (new - base) / base of the median; < 0 is faster
  double noise = NAN;      // sqrt(u_base² + u_new²) of the sides' uncertainties, missing counted as 0; +inf: unknown
  double limit = NAN;      // max(threshold, k·noise): what |change| must exceed for faster/slower; for a
                           // one-round row at least the allowance in the change's direction (0.5 slower,
                           // 0.333 faster at 1.5x)
  Verdict verdict = Verdict::not_applicable;
  std::string verdict_reason;  // why an `ambiguous` verdict is not slower/faster ("" otherwise): one_round_note()
  // Both sides name their library's version and the two differ (a plugin or peer rebuilt or upgraded): a
  // warning says so, as for other changes of environment; never a regression on its own.
  bool library_changed() const {
    return !base.library_version.empty() && !next.library_version.empty() && base.library_version != next.library_version;
  }
};

// A row only one of the reports has.
struct LoneRow {
  Problem problem;
  std::string label, strategy, status;
  double median_ms = NAN;
};

struct CompareResult {
  CompareOptions options;
  std::string base_name, new_name;        // file names (or any labels) for the header
  Report base_header, new_header;         // each report's tool, command, created, device, settings (no rows)
  std::vector<CompareRow> rows;           // matched rows, in the baseline's order
  std::vector<LoneRow> missing;           // in the baseline only
  std::vector<LoneRow> added;             // in the new run only
  std::vector<std::string> warnings;      // device ignored, settings differ, library versions differ, duplicate rows
  int count(Verdict v) const;
  int one_round_ambiguous() const;        // ambiguous rows that one round on a side made so
  // Any slower or worse row (or missing, with fail_on_missing). Ambiguous rows, one-round ones included,
  // faster, better, changed and new rows never count.
  bool regressed() const;
  int exit_code() const { return regressed() ? 1 : 0; }
};

// Fewer samples than this in either run: its stdev says nothing, so the row's noise is unknown (+inf).
inline constexpr std::int64_t kMinSamplesForNoise = 3;

// The verdict_reason of a row that one round made ambiguous: "one round: between-process spread unknown;
// rerun with --rounds>=4" (4: kMinRoundsForSpread, the rounds from which compare uses their spread).
std::string one_round_note();

// The one-round rule on a verdict of the threshold-and-noise rule (timing_verdict): a slower/faster verdict
// of a row with one round on a side whose times differ by no more than opt.one_round_allowance (either way)
// becomes ambiguous. `base_rounds`/`new_rounds` as CompareSide::rounds. Returns the verdict; `limit`, when
// given, is raised to the allowance in the change's direction for a one-round row.
Verdict one_round_verdict(Verdict v, double base_ms, double new_ms, std::int64_t base_rounds, std::int64_t new_rounds,
                          const CompareOptions& opt, double* limit = nullptr);

// Verdict for one matched row whose medians are known (the rule is in compare.cpp), from the two sides'
// uncertainties. A NaN uncertainty counts as 0; an infinite one (unknown) makes every change ambiguous.
Verdict timing_verdict(double base_ms, double new_ms, double base_noise, double new_noise,
                       const CompareOptions& opt, double* change = nullptr, double* combined_noise = nullptr,
                       double* limit = nullptr);
// Rank of a status for "got worse": ok 3, unsupported 2, incorrect and failed (and anything else) 1.
int status_rank(const std::string& status);

// Compares two reports. Throws UsageError when the device names (or backends) differ and !opt.ignore_device.
CompareResult compare_reports(const Report& base, const Report& next, const CompareOptions& opt,
                              const std::string& base_name = "base", const std::string& new_name = "new");

// Renders a comparison as console | md | csv | json; throws UsageError for another format.
std::string render_compare(const CompareResult& r, const std::string& format);
nlohmann::json compare_to_json(const CompareResult& r);

}  // namespace ab

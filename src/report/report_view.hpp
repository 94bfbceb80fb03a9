// Read-only views of a typed report's rows (run/run_report.hpp) for the printers and compare: each row
// flattened to the numbers they show (NaN / -1 / "" where the row has none), rows grouped by problem with
// the fastest ok row marked, and the header lines.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "run/run_report.hpp"

namespace ab {

// One result row, flattened for printing and comparing.
struct RowView {
  const ResultRow* row = nullptr;       // the typed row (owned by the report)
  std::string key;                      // problem_key(problem) + "|" + strategy: how rows are matched
  std::string label;                    // problem_label(problem)
  std::string strategy, status, reason;
  bool peer = false;                    // strategy starts with "peer:"
  double median_ms = NAN, noise = NAN;  // time_ms.median, time_ms.noise (relative, stdev / mean)
  std::int64_t samples = -1;
  std::int64_t rounds = 1;              // rounds.count (1 when absent)
  double round_spread = NAN;            // rounds.spread: stdev / mean of the rounds' medians
  double round_error = NAN;             // rounds.error: relative standard error of the rounds' center
  int noise_met = -1;                   // noise_met: 1, 0, or -1 when absent (older reports)
  int sm_clock_mhz = 0;                 // 0 unknown
  bool clock_low = false;
  double tflops = NAN, gbps = NAN;
  double copy_fraction = NAN;           // gbps / the device's measured copy bandwidth (older reports: NaN)
  std::int64_t launches_expected = -1;  // launches.expected.total; -1 without a contract (peer rows)
  std::int64_t launches_measured = -1;  // launches.measured.kernels; -1 when not measured
  bool launches_mismatch = false;       // the runner's verdict (RowLaunches::match) said no
  bool launches_explained = false;  // more kernels than the contract, all cuBLASLt split-K reductions
  double rel_err = NAN;                 // verify.rel_l2_err
  double tolerance = NAN;               // verify.tolerance
  int verify_passed = -1;               // verify.passed: 1, 0, or -1 when absent
  bool ok() const { return status == "ok"; }
  bool timed() const { return ok() && median_ms > 0; }
};

// A problem and its rows, in report order; `fastest` indexes the timed row with the smallest median.
struct ProblemGroup {
  std::string key, label;
  Problem problem;
  std::vector<RowView> rows;
  int fastest = -1;
  int fastest_own = -1;  // the fastest timed attnbench (non-peer) row, when a peer row is faster; else -1
  double best_ms() const { return fastest >= 0 ? rows[fastest].median_ms : NAN; }
};

RowView view_row(const ResultRow& row);
// The report's rows grouped by problem (first-seen order).
std::vector<ProblemGroup> group_rows(const Report& report);
// "NVIDIA H200 (cuda, cc 9.0, 132 SMs, driver 13.0)" from the report's device; a CPU backend's count is
// "N hardware threads".
std::string device_line(const nlohmann::json& device);
// "attnbench 0.1.0 (abc1234), 2026-11-21T22:10:00Z" from the tool and the creation time.
// "devices 0: NVIDIA H200, 1: NVIDIA H200" when more than one device ran rows (--devices), else "".
std::string devices_line(const Report& report);
// The model of the device a row ran on (the header's `devices` entry of its index), else the report's device.
std::string row_device_name(const Report& report, const ResultRow& row);
std::string tool_line(const ToolInfo& tool, const std::string& created);
// "L2 flushed, events timer, warm-up 3, >=10 samples, noise target 2%" from the report's settings; with the
// report's device of the CPU backend (which flushes no cache) "caches not flushed (cpu backend)" in place of
// "L2 flushed" / "hot L2".
std::string settings_line(const nlohmann::json& settings, const nlohmann::json& device = nlohmann::json::object());

}  // namespace ab

// Tolerant read-only views of an attnbench.report/1 document's rows (missing or mistyped fields become
// NaN / -1 / ""), problem labels and keys, and rows grouped by problem with the fastest ok row marked.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ab {

// One result row, flattened for printing and comparing.
struct RowView {
  const nlohmann::json* row = nullptr;  // the row it was made from (owned by the report)
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
  std::int64_t launches_expected = -1;  // launches.expected.total (or gemm + kernels)
  std::int64_t launches_measured = -1;  // launches.measured.kernels; -1 when not measured
  bool launches_mismatch = false;       // both known and different
  bool launches_explained = false;  // more kernels than the contract, all cuBLASLt split-K reductions
  double rel_err = NAN;                 // verify.rel_l2_err
  int verify_passed = -1;               // verify.passed: 1, 0, or -1 when absent
  bool ok() const { return status == "ok"; }
  bool timed() const { return ok() && median_ms > 0; }
};

// A problem and its rows, in report order; `fastest` indexes the timed row with the smallest median.
struct ProblemGroup {
  std::string key, label;
  nlohmann::json problem;
  std::vector<RowView> rows;
  int fastest = -1;
  int fastest_own = -1;  // the fastest timed attnbench (non-peer) row, when a peer row is faster; else -1
  double best_ms() const { return fastest >= 0 ? rows[fastest].median_ms : NAN; }
};

// Numbers from a JSON object: NaN (or `fallback`) unless `j[key]` is a number.
double json_num(const nlohmann::json& j, const char* key);
std::int64_t json_int(const nlohmann::json& j, const char* key, std::int64_t fallback = -1);
std::string json_str(const nlohmann::json& j, const char* key, const std::string& fallback = "");

// "B=32 H=12 S=512 D=64 P=1 contiguous fp16 causal", as Problem::label() writes it.
std::string problem_label(const nlohmann::json& problem);
// Canonical text of every problem field (sorted keys), so equal problems give equal keys.
std::string problem_key(const nlohmann::json& problem);
RowView view_row(const nlohmann::json& row);
// The report's results grouped by problem (first-seen order). Throws UsageError when results is not an array.
std::vector<ProblemGroup> group_rows(const nlohmann::json& report);
// "NVIDIA H200 (cuda, cc 9.0, 132 SMs, driver 13.0)" from report["device"].
std::string device_line(const nlohmann::json& report);
// "attnbench 0.1.0 (abc1234), 2026-11-21T22:10:00Z" from report["tool"] and report["created"].
std::string tool_line(const nlohmann::json& report);
// "L2 flushed, events timer, warm-up 3, >=10 samples, noise target 2%" from report["settings"].
std::string settings_line(const nlohmann::json& report);

}  // namespace ab

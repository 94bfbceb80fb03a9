// A typed result row of a report (docs/report-format.md): the problem, the strategy, its disposition, its
// timing over rounds, its launches, its verification, its configuration and any injected slowdown. JSON is
// written and read only by result_row_json.cpp (to_json / result_row_from_json).
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gemm_engine.hpp"
#include "core/problem.hpp"
#include "core/strategy.hpp"
#include "measure/rounds.hpp"
#include "run/disposition.hpp"
#include "strategies/plugin_kind.hpp"

namespace ab {

struct MeasuredLaunches {
  std::int64_t kernels = -1, gemm_calls = -1, other_kernels = -1;  // -1: not counted
  std::vector<std::string> kernel_names;
  std::string source;
};

struct RowLaunches {
  bool has_contract = true;  // false: no expected counts (peer rows of scripts/peer_torch.py, and rows of a
                             // plugin or peer whose kernels_per_forward returned -1: its plan decides)
  std::int64_t expected_gemm = 0, expected_kernels = 0;
  std::string formula;
  std::optional<MeasuredLaunches> measured;
  bool match = false;     // with measured: the count kept the contract (or its extras are explained); when a
                          // report does not say, the counts agree or one of them is unknown; true (and not
                          // written) without a contract
  std::string explained;  // "N extra cuBLASLt split-K reduction kernel(s)", or ""
  std::int64_t expected_total() const { return expected_gemm + expected_kernels; }
};

struct RowVerification {
  std::string reference;
  double max_abs_err = 0, rel_l2_err = NAN, tolerance = 0;  // rel_l2_err NaN: not finite (null in JSON); NaN
                                                            // also for a field a report left out (peer rows)
  std::int64_t nonfinite = 0;
  bool passed = false;
};

struct InjectedSlowdown {
  double fraction = 0, delay_ms = 0, base_ms = 0, achieved = 0;
};

// The configuration a row ran with: what the strategy chose, each GEMM plan's algorithm (the backend's own
// attributes, cuBLASLt's on CUDA, stay an opaque object), and where the configuration came from.
struct RowConfig {
  StrategyConfig strategy;
  std::vector<GemmPlanChoice> gemm_algos;
  std::string source;  // heuristic | tuned | cache | user: the fused tile's source, else the last non-heuristic plan's
};

struct ResultRow {
  Problem problem;
  std::string strategy;
  Disposition disposition = Disposition::failed;
  std::string reason;                          // "" for ok rows
  RowLaunches launches;
  std::optional<RowConfig> config;             // set once the strategy was set up
  std::optional<RowVerification> verify;       // with --verify, once the verify forward ran
  std::optional<InjectedSlowdown> injected_slowdown;
  std::optional<RowTiming> timing;             // ok rows that timed
  double tflops = 0, gbps = 0;                 // with timing: from time_ms.median (NaN when a report left them out)
  double copy_fraction = NAN;                  // gbps / the device's measured copy bandwidth (NaN: unknown)
  int device = -1;                             // the device index that ran the row (--device or one of
                                               // --devices); -1: not recorded (reports before it, script peer rows)
  std::string library_version;                 // plugin and peer rows: their library's version (its table's
                                               // `version`); "" for the built-in strategies and script peers
  // Another library's attention, not attnbench's own: an in-process peer (--peers, a plugin library of this
  // project, with measured launches, verification and a device) or a row of scripts/peer_torch.py (PyTorch
  // SDPA, timed by the script; no launch contract, no device).
  bool peer() const { return is_peer_strategy(strategy); }
};

nlohmann::json to_json(const RowLaunches& l);
nlohmann::json to_json(const RowVerification& v);
nlohmann::json to_json(const InjectedSlowdown& s);
nlohmann::json to_json(const RowConfig& c);
nlohmann::json to_json(const ResultRow& row);
// A row of any attnbench.report/1 document: this binary's (every version, in-process peer rows included),
// peer rows of scripts/peer_torch.py. Optional sections and fields added over time read as absent (std::nullopt, NaN,
// -1, ""); the problem, strategy and status are required. A missing required field or a field of the wrong
// type throws UsageError "ORIGIN: WHEREfield must be ...", e.g. "'r.json': results[3].problem.causal must
// be true or false" with origin "'r.json'" and where "results[3].".
ResultRow result_row_from_json(const nlohmann::json& row, const std::string& origin, const std::string& where = "");

}  // namespace ab

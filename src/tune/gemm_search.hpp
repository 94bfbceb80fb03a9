// The GEMM search for one set-up strategy: for each distinct shape among its plans, every candidate
// algorithm is set, verified by a full forward and timed; the fastest correct one stays.
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/strategy.hpp"
#include "tune/plan_recorder.hpp"
#include "run/problem_inputs.hpp"
#include "tune/tune_types.hpp"

namespace ab {

struct GemmSearchState {
  const TuneOptions& opt;
  TuneOutcome& out;
  std::map<std::string, std::size_t> tuned;      // shape key -> index in out.gemm
  std::function<void(const std::string&)> message;  // per-shape lines (may be empty)
  std::function<void()> on_record;                  // after each shape's record is added (checkpoint)
  // Candidates ("gemm:<key>|<identity>") that lost the device context once: skipped when the strategy is
  // retried after recovery, so one crashing algorithm cannot stop the search.
  std::set<std::string>* crashed = nullptr;
};

// `st` is set up on `rec`, whose plans() are the strategy's plans. Shapes tuned earlier in the run get their
// best algorithm (source "tuned"), shapes in opt.skip_cached their cached one (source "cache"), and the
// others are searched one at a time, the rest staying at their current best. Candidates that fail are
// recorded and skipped; a sticky BackendError (device context lost) propagates.
void tune_strategy_gemms(GemmSearchState& s, PlanRecorder& rec, Strategy& st, const Problem& p, ProblemInputs& in);

// The finalists of a screened record: the heuristic's choice (when it verified) first, then up to
// `finalists` other verified or cut candidates by screening time, none that successive halving dropped (all
// of them when finalists < 0; a cut one is verified before it is re-measured), then the rest of the
// heuristic's top-N that an exhaustive list put first (r.heuristic_top), dropped or not.
std::vector<int> finalist_indices(const GemmTuneRecord& r, int finalists);

// --dry_run: adds a record per shape not seen before with its candidate list (algos) and no outcomes.
void list_strategy_gemm_candidates(GemmSearchState& s, PlanRecorder& rec, Strategy& st, const Problem& p);

// Identity of an algorithm for de-duplicating candidate lists: its blob, else its label and attributes.
std::string gemm_algo_identity(const GemmAlgo& a);

}  // namespace ab

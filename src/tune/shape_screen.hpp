// Phase 1 of a GEMM shape's search on candidates [lo, hi) of its record: every candidate is probed (under
// halving, with a group margin, one representative per base configuration first and only the groups near the
// fastest in full: docs/tuning.md, step 2), and those within the probe cutoff are screened, by successive
// halving (step 3) or, with halving off or a range of at most its final round, each in one pass as before
// (tune/candidate_trials.hpp's screen_candidate). Fills the candidates' outcomes in the record, its stages and
// its verify and screen times. Returns the fastest probe of a verified candidate (the setup's probe_bound when
// none here was faster; 0 without a probe).
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "tune/candidate_trials.hpp"
#include "tune/plan_groups.hpp"
#include "tune/plan_recorder.hpp"
#include "tune/tune_types.hpp"

namespace ab {

struct ShapeScreenSetup {
  PlanRecorder& rec;
  const PlanGroup& g;
  const ScreenTiming& t;
  HalvingRule rule;
  // A whole forward checked against the reference with the candidate set ("" when right).
  std::function<std::string(const GemmAlgo&)> verify;
  // Runs one step of candidate i, or marks it failed without running it (it lost the device context before);
  // a sticky BackendError propagates (gemm_search.cpp's ShapeSearch::guarded).
  std::function<void(std::size_t, const std::function<void()>&)> guarded;
  // The grouped probe's margin (TuneOptions::group_margin; 0: every candidate probed). Used under halving only.
  double group_margin = 0;
  // The fastest probe of a verified candidate known before this range (an earlier screening unit of the shape in
  // this process; 0: none): the cutoff and the group margin are relative to it until a faster one is verified.
  double probe_bound = 0;
};

// r.algos and the candidates' labels are set; r.probe_calls and r.screen_calls are the calls the probe and a
// screen sample replay. A stop request (SIGINT/SIGTERM) marks the candidates not yet done failed ("interrupted").
double screen_shape(const ShapeScreenSetup& s, GemmTuneRecord& r, std::size_t lo, std::size_t hi);

}  // namespace ab

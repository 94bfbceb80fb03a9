// The two trials a GEMM candidate goes through: phase 1 in one pass (set, probe, verify, short screen: the screen
// without successive halving, tune/shape_screen.hpp) and phase 2 (set again, verify on the tuned problem when
// phase 1 used a reduced copy, full measurement). ScreenTiming is how phase 1 times, halving or not.
#pragma once
#include <chrono>
#include <functional>
#include <string>

#include "core/strategy.hpp"
#include "measure/measure.hpp"
#include "run/problem_inputs.hpp"
#include "tune/plan_groups.hpp"
#include "tune/plan_recorder.hpp"
#include "tune/queued_screen.hpp"
#include "tune/tune_types.hpp"

namespace ab {

// Seconds on the steady clock since `t0`.
double seconds_since(std::chrono::steady_clock::time_point t0);

// How phase 1 times candidates. The probe is one sample of the shape's first calls (`probe`); the screen
// is `samples` samples of the calls the screen replays (`screen`, the median is the screen time). When the
// probe replays the same calls (`probe_is_screen`, as for a batched strategy's one call) it is the
// screen's first sample; otherwise it has its own timer, so that its delay follows its own enqueue time.
struct ScreenTiming {
  QueuedScreen& probe_timer;
  QueuedScreen& screen_timer;
  std::function<void()> probe;
  std::function<void()> screen;
  bool probe_is_screen = true;
  double scale = 1;        // screen calls / probe calls: a cut candidate's screen_ms is its probe times this
  int samples = 3;
  double cutoff = 1.5;     // 0: no probe; every candidate is verified and screened fully
};

// Phase 1 for one candidate: set it, probe it, and when its probe is within `cutoff` times the fastest
// probe of a verified candidate (`best_probe_ms`, 0 for none yet), verify a whole forward against the
// reference (`verify`: of the problem, or of its reduced B=1 H=1 copy) and screen it. A candidate over the
// cutoff is cut: not verified (it cannot win, so whether it is right does not matter; an exhaustive
// search cuts ~99% of 10^5 candidates per shape, and verifying was half of each one's cost). Failures and
// wrong answers are recorded here and never timed further. Adds the verify and screen times to `r`.
CandidateOutcome screen_candidate(PlanRecorder& rec, const PlanGroup& g, const GemmAlgo& a,
                                  const std::function<std::string(const GemmAlgo&)>& verify, const ScreenTiming& t,
                                  double best_probe_ms, GemmTuneRecord& r);

// Phase 2 for one finalist: set it again, verify the problem's own forward when phase 1 verified a reduced
// copy (`verify_here`) or did not verify it (a cut candidate, which becomes "ok" when it passes), and take
// the full measurement (`ms`) into `c`.
void confirm_candidate(PlanRecorder& rec, const PlanGroup& g, const GemmAlgo& a, Strategy& st, ProblemInputs& in,
                       bool verify_here, const MeasureSettings& ms, CandidateOutcome& c);

}  // namespace ab

// The two trials a GEMM candidate goes through: phase 1 (set, verify, short screen) and phase 2 (set again,
// verify on the tuned problem when phase 1 used a reduced copy, full measurement).
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

// Phase 1 for one candidate: set it, verify a whole forward against the reference (`verify`: of the
// problem, or of its reduced B=1 H=1 copy), then screen it: `samples` samples of `gemm_alone`, the shape's
// own GEMM calls of one forward, on `timer` (the median is the screen time). One sample first: a candidate
// over `cutoff` times the fastest screened so far (`best_screen_ms`, 0 for none) keeps that sample as its
// screen time and is not sampled further. Failures and wrong answers are recorded here and never timed.
// Adds the verify and screen times to `r`.
CandidateOutcome screen_candidate(PlanRecorder& rec, const PlanGroup& g, const GemmAlgo& a,
                                  const std::function<std::string(const GemmAlgo&)>& verify, QueuedScreen& timer,
                                  int samples, double cutoff, double best_screen_ms,
                                  const std::function<void()>& gemm_alone, GemmTuneRecord& r);

// Phase 2 for one finalist: set it again, verify the problem's own forward when phase 1 verified a reduced
// copy (`verify_here`), and take the full measurement (`ms`) into `c`.
void confirm_candidate(PlanRecorder& rec, const PlanGroup& g, const GemmAlgo& a, Strategy& st, ProblemInputs& in,
                       bool verify_here, const MeasureSettings& ms, CandidateOutcome& c);

}  // namespace ab

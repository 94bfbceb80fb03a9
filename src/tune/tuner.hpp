// `attnbench tune`'s engine: for every problem and selected strategy, search the GEMM algorithms and the
// fused tile, and collect the winners as heuristic-cache entries for this environment.
#pragma once
#include "core/backend.hpp"
#include "tune/tune_types.hpp"

namespace ab {

// Runs the search over opt.problems. Clears any GEMM chooser on `backend` first (tuning starts from the
// heuristic). Shows a progress line with an ETA on stderr unless opt.quiet. UsageError on bad options
// (top < 1, invalid measure settings, unknown strategy); device failures of single candidates, strategies
// or problems are recorded in the outcome (candidates / notes), never thrown.
TuneOutcome tune_grid(Backend& backend, const TuneOptions& opt);

}  // namespace ab

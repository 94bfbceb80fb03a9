// The fused tile search for one problem: every compiled tile that can implement it, verified and timed.
#pragma once
#include <set>
#include <string>

#include "core/strategy.hpp"
#include "run/problem_inputs.hpp"
#include "tune/tune_types.hpp"

namespace ab {

// Tries every tile of backend.kernels().fused_tiles() that `fused` can implement `p` with; the fastest correct one
// wins. `baseline` is the default tile (core/fused_default_tile.hpp's where it runs, else the first that can implement). Returns a record with no tiles when
// none can (the reason goes into *why). A sticky BackendError propagates, after the tile is added to
// `crashed` ("fused:<problem key>|<tile>"); tiles already in it are recorded as failed without running.
FusedTuneRecord tune_fused_tiles(Backend& backend, Strategy& fused, const Problem& p, ProblemInputs& in,
                                 const TuneOptions& opt, std::string* why, std::set<std::string>* crashed = nullptr);

// --dry_run: the tiles tune_fused_tiles would try, with no outcomes.
FusedTuneRecord list_fused_tiles(Backend& backend, Strategy& fused, const Problem& p, const TuneOptions& opt,
                                 std::string* why);

}  // namespace ab

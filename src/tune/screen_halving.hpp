// Successive halving's rule (docs/tuning.md, step 3): which of a stage's candidates go on, the stage's noise
// band, and one shape's stages summed over several screening units and as JSON. Pure: no device
// (tests/cpu/test_screen_halving.cpp).
#pragma once
#include <vector>

#include "tune/tune_types.hpp"

namespace ab {

// The noise band of a stage's times: `rule.band` for one sample of the screen's `screen_calls` calls, wider by
// √(screen_calls / calls) for a sample of fewer calls (the probe), narrower by √samples for a median of several.
double stage_band(const HalvingRule& rule, int calls, int screen_calls, int samples);

// Which of a stage's candidates go on, given each one's time (ms). Those `protect` marks (the heuristic's
// choice) and those without a time (0 or less) always do, outside the count; of the others, all when they are at
// most rule.final_round, else the fastest rule.keep fraction of them (rounded up, never fewer than
// final_round; of equal times the earlier first) and every one within `band` of the fastest of all (time <=
// fastest x (1 + band)) up to rule.band_limit times that quota (rule.band_limit 0: every one within the band).
std::vector<bool> halving_keeps(const std::vector<double>& ms, const std::vector<bool>& protect, const HalvingRule& rule,
                                double band);

// Adds one screening unit's stages (`more`) into `into`, matching each stage by kind and sample count (the
// units of one shape may run different numbers of halving stages, and a unit whose range holds no variants of
// one base has no group stage; their final rounds add up), in the order group, probe, halving stages by
// samples, final.
void add_screen_stages(std::vector<ScreenStage>& into, const std::vector<ScreenStage>& more);

// The GEMM calls the screen without halving (and without the grouped probe) would have replayed on the same
// candidates: a probe of every candidate, then `samples` of the final round for every candidate within the probe
// cutoff (less the probe when it is the screen's first sample). 0 without a final round.
std::int64_t unhalved_screen_calls(const std::vector<ScreenStage>& stages);

// A shape's stages as JSON (a list of ScreenStage::to_json), and back.
nlohmann::json screen_stages_to_json(const std::vector<ScreenStage>& stages);
std::vector<ScreenStage> screen_stages_from_json(const nlohmann::json& j);

}  // namespace ab

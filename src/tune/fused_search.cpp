// Fused tile search: set the strategy up with each tile, verify one forward, time it, keep the fastest.
// The tiles are the backend's list: for decode problems (q_len <= 16) on CUDA that includes the split-KV
// decode tile with the heuristic's split count (the default) and fixed counts 1, 2, 4, 8, 16, 32
// (fused_decode::kSearchSplits), each tried where the KV length allows it.
#include "tune/fused_search.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/fused_default_tile.hpp"
#include "core/stop_request.hpp"
#include "tune/problem_key.hpp"

namespace ab {

FusedTuneRecord list_fused_tiles(Backend& be, Strategy& fused, const Problem& p, const TuneOptions& opt,
                                 std::string* why) {
  FusedTuneRecord r;
  r.problem = p;
  std::string first_reason;
  for (const FusedTile& tile : be.kernels().fused_tiles()) {
    StrategyOptions so = opt.strategy;
    so.config = tile.name();
    std::string reason = fused.can_run(p, be, so);
    if (reason.empty()) r.tiles.push_back(tile);
    else if (first_reason.empty()) first_reason = reason;
  }
  // The default plan's tile first (the baseline): the problem's preferred tile where it runs, else the first.
  if (const std::optional<FusedTile> pref = preferred_fused_tile(p)) {
    auto it = std::find(r.tiles.begin(), r.tiles.end(), *pref);
    if (it != r.tiles.end()) std::rotate(r.tiles.begin(), it, it + 1);
  }
  if (!r.tiles.empty()) r.baseline = 0;
  if (r.tiles.empty() && why) *why = first_reason.empty() ? "no fused tile is compiled" : first_reason;
  return r;
}

FusedTuneRecord tune_fused_tiles(Backend& be, Strategy& fused, const Problem& p, ProblemInputs& in,
                                 const TuneOptions& opt, std::string* why, std::set<std::string>* crashed) {
  FusedTuneRecord r = list_fused_tiles(be, fused, p, opt, why);
  r.baseline = -1;
  for (std::size_t i = 0; i < r.tiles.size(); ++i) {
    const FusedTile& tile = r.tiles[i];
    StrategyOptions so = opt.strategy;
    so.config = tile.name();
    CandidateOutcome c;
    c.label = tile.name();
    c.baseline = i == 0;  // the strategy's default: the first tile that can implement
    bool set_up = false;
    const std::string crash_id = "fused:" + problem_cache_key(p) + "|" + tile.name();
    if (stop_requested()) {  // SIGINT/SIGTERM: the rest are not tried (the tuner keeps nothing of this problem)
      c.status = "failed";
      c.reason = "interrupted";
      r.candidates.push_back(std::move(c));
      continue;
    }
    try {
      if (crashed && crashed->count(crash_id))
        throw BackendError("lost the device context in an earlier attempt; skipped");
      fused.setup(be, p, in.io(), so);
      set_up = true;
      std::string bad = in.check_forward([&] { fused.run(be); });
      if (!bad.empty()) {
        c.status = "incorrect";
        c.reason = bad;
      } else {
        Measurement m = measure_forward(be, [&] { fused.run(be); }, opt.measure);
        c.status = "ok";
        c.ms = m.gpu.median;
        c.noise = m.gpu.noise;
        c.warnings = m.warnings;
      }
      fused.teardown(be);
      set_up = false;
    } catch (const BackendError& e) {
      if (set_up) {
        try {
          fused.teardown(be);
        } catch (...) {
        }
      }
      if (e.sticky) {
        if (crashed) crashed->insert(crash_id);
        throw;
      }
      c.status = "failed";
      c.reason = e.what();
    } catch (const UnsupportedError& e) {
      if (set_up) fused.teardown(be);
      c.status = "failed";
      c.reason = fmt::format("unsupported: {}", e.what());
    }
    if (c.baseline) r.baseline = static_cast<int>(i);
    if (c.status == "ok" && (r.best < 0 || c.ms < r.candidates[r.best].ms)) r.best = static_cast<int>(i);
    r.candidates.push_back(c);
  }
  return r;
}

}  // namespace ab

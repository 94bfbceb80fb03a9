// Tune records → cache entries, and the records' failure counts.
#include "tune/tune_records.hpp"

#include "tune/problem_key.hpp"
#include "tune/screen_halving.hpp"

namespace ab {

namespace {

// A cut candidate did not fail: it was only too slow to be worth verifying.
bool failed(const CandidateOutcome& c) { return c.status != "ok" && c.status != "cut"; }

int count_failed(const std::vector<CandidateOutcome>& cs) {
  int n = 0;
  for (const auto& c : cs) n += failed(c);
  return n;
}

// The first kMaxFailures failures in full (an exhaustive search can have thousands); `failed` counts them all.
constexpr std::size_t kMaxFailures = 50;

nlohmann::json failure_list(const std::vector<CandidateOutcome>& cs, const char* what) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : cs)
    if (failed(c) && out.size() < kMaxFailures)
      out.push_back({{what, c.label}, {"status", c.status}, {"reason", c.reason}});
  return out;
}

// The screen's successive halving as the cache records it: its rule, or null when it was off.
nlohmann::json halving_json(const HalvingRule& h) {
  if (!h.on()) return nullptr;
  return {{"keep", h.keep}, {"final", h.final_round}, {"band", h.band}, {"band_limit", h.band_limit}};
}

// How the probe found L2: "flushed" (a probe that is the screen's first sample, or --probe_flush), "warm" (a
// probe of fewer calls: it only ranks), null without a probe.
nlohmann::json probe_l2_json(const GemmTuneRecord& r, const TuneOptions& opt) {
  if (r.probe_calls <= 0) return nullptr;
  const bool flushed = !opt.screen.hot && (r.probe_calls == r.screen_calls || opt.probe_flush);
  return flushed ? "flushed" : "warm";
}

// The grouped probe as the cache records it: its margin where the record's screen has a group stage, else null
// (grouping off, a search that is not exhaustive, or a list with no variants of one base to group).
nlohmann::json grouping_json(const GemmTuneRecord& r, const TuneOptions& opt) {
  for (const ScreenStage& s : r.stages)
    if (s.kind == "group") return {{"margin", opt.group_margin}};
  return nullptr;
}

}  // namespace

int GemmTuneRecord::failed() const { return count_failed(candidates); }
int FusedTuneRecord::failed() const { return count_failed(candidates); }
int GemmTuneRecord::cut() const {
  int n = 0;
  for (const auto& c : candidates) n += c.status == "cut";
  return n;
}
int GemmTuneRecord::finalists() const {
  int n = 0;
  for (const auto& c : candidates) n += c.finalist;
  return n;
}

GemmCacheEntry make_gemm_entry(const GemmTuneRecord& r, const CacheEnvironment& env, const TuneOptions& opt,
                               const std::string& tuned_at) {
  GemmCacheEntry e;
  e.env = env.id();
  e.key = r.key;
  e.shape = r.shape.to_json();
  e.algo = r.algos.at(static_cast<std::size_t>(r.best));
  e.algo.heuristic_first = r.best == r.baseline;
  e.best_ms = r.best_ms();
  e.heuristic_ms = r.baseline_ms();
  e.gain = r.gain();
  e.heuristic_algo = r.baseline >= 0 ? r.candidates[r.baseline].label : "";
  e.candidates = static_cast<int>(r.candidates.size());
  e.failed = r.failed();
  e.failures = failure_list(r.candidates, "algo");
  e.search = opt.exhaustive ? "exhaustive" : "heuristic";
  e.top = opt.exhaustive ? 0 : opt.top;
  e.measured_with = {{"strategy", r.strategy},
                     {"problem", problem_cache_key(r.problem)},
                     {"plans", r.plans},
                     {"timer", timer_kind_name(opt.measure.timer)},
                     {"screen_samples", opt.screen.min_samples},
                     {"screen_calls", r.screen_calls},
                     {"probe_calls", r.probe_calls},
                     {"cut", r.cut()},
                     {"own_calls", r.own_calls},
                     {"verified_on", r.verified_on},
                     {"finalists", r.finalists()},
                     {"best_noise", r.candidates[static_cast<std::size_t>(r.best)].noise},
                     {"probe_l2", probe_l2_json(r, opt)},
                     {"halving", halving_json(opt.halving)},
                     {"grouping", grouping_json(r, opt)},
                     {"stages", screen_stages_to_json(r.stages)}};
  e.tuned_at = tuned_at;
  return e;
}

FusedCacheEntry make_fused_entry(const FusedTuneRecord& r, const CacheEnvironment& env, const std::string& tuned_at) {
  FusedCacheEntry e;
  e.env = env.id();
  e.key = problem_cache_key(r.problem);
  e.problem = problem_cache_json(r.problem);
  e.tile = r.tiles.at(static_cast<std::size_t>(r.best));
  e.best_ms = r.best_ms();
  e.default_ms = r.baseline_ms();
  e.gain = r.gain();
  e.default_tile = r.baseline >= 0 ? r.candidates[r.baseline].label : "";
  e.best_noise = r.candidates[static_cast<std::size_t>(r.best)].noise;
  e.candidates = static_cast<int>(r.candidates.size());
  e.failed = r.failed();
  e.failures = failure_list(r.candidates, "tile");
  e.tuned_at = tuned_at;
  return e;
}

PluginCacheEntry make_plugin_entry(const PluginTuneRecord& r, const CacheEnvironment& env, const std::string& tuned_at) {
  PluginCacheEntry e;
  e.env = env.id();
  e.strategy = r.strategy;
  e.key = problem_cache_key(r.problem) + "|" + r.strategy;
  e.problem = problem_cache_json(r.problem);
  e.config = r.candidates.at(static_cast<std::size_t>(r.best)).label;
  e.best_ms = r.best_ms();
  e.default_ms = r.candidates.front().status == "ok" ? r.candidates.front().ms : 0;
  e.default_config = r.candidates.front().label;
  e.candidates = static_cast<int>(r.candidates.size());
  for (const CandidateOutcome& c : r.candidates) e.failed += c.status != "ok";
  e.tuned_at = tuned_at;
  return e;
}

}  // namespace ab

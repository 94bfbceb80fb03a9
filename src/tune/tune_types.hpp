// The tuner's options and what it found: per-candidate outcomes, one record per tuned GEMM shape and per
// fused problem, and the run's notes.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.hpp"
#include "core/problem.hpp"
#include "core/strategy.hpp"
#include "measure/measure.hpp"
#include "run/result_row.hpp"
#include "tune/cache_environment.hpp"
#include "tune/heuristic_cache.hpp"

namespace ab {

// The screening pass's settings from the full ones: same timer and L2 flushing, a fixed `samples` count (no
// noise target) and no warm-up (the verification forward just ran the candidate).
inline MeasureSettings screening_settings(MeasureSettings full, int samples) {
  full.warmup = 0;
  full.min_samples = samples;
  full.max_samples = samples;
  return full;
}

struct CandidateOutcome;
struct ListedCandidates;
struct ScreenedShape;

// Successive halving of a shape's screen (tune/shape_screen.hpp, docs/tuning.md): after the probe, each stage
// measures its candidates once more and keeps the fastest `keep` fraction of them, never fewer than
// `final_round`, nor the heuristic's choice, nor any candidate within the stage's noise band of the fastest up
// to `band_limit` times that fraction (tune/screen_halving.hpp); the `final_round` or fewer left are screened
// with fresh samples, as every candidate within the probe cutoff was without halving.
struct HalvingRule {
  double keep = 0.25;    // 0: off (every candidate within the probe cutoff gets the full screen)
  int final_round = 8;
  double band = 0.03;    // the noise band of one sample of the screen's calls, as a fraction of the fastest
  // A stage keeps at most this many times its quota (the fastest `keep` of its candidates, at least
  // `final_round`), within the band or not: an exhaustive list holds thousands of variants of one kernel whose
  // times are within any band of each other, and keeping them all made every stage keep almost everyone
  // (docs/tuning.md). 0: no limit.
  double band_limit = 1.5;
  bool on() const { return keep > 0; }
};

// One stage of a shape's screen, as the tune's summary and cache record it: the grouped probe's representatives
// (entered: the range's candidates; kept: those of the groups within the margin; calls_spent / calls: the
// candidates it probed), the probe (with its cutoff and, under halving, the ranking of its times), a halving
// stage, or the final round.
struct ScreenStage {
  std::string kind;              // "group", "probe", "halving" or "final"
  int calls = 0;                 // GEMM calls one sample replays
  int samples = 0;               // samples behind each candidate's time in this stage (final: fresh ones when halving ran)
  std::size_t entered = 0;       // candidates measured in this stage
  std::size_t passed = 0;        // of those, the ones neither cut (over the probe cutoff) nor failed nor wrong
  std::size_t kept = 0;          // of those, the ones that went on (the final round: the contenders for the finalists)
  std::int64_t calls_spent = 0;  // GEMM calls this stage replayed (a sample taken again is counted once)
  nlohmann::json to_json() const;
  static ScreenStage from_json(const nlohmann::json& j);
};

// One screening unit of a split search (tune --devices, orchestrate/tune_split.hpp): candidates [lo, hi) of the
// shape `key`, out of `count` listed.
struct ScreenRange {
  std::string key;
  std::size_t lo = 0, hi = 0, count = 0;
};

struct TuneOptions {
  std::vector<Problem> problems;
  std::string strategies = "all";   // as --strategies; GEMM strategies tune their GEMMs, fused its tile
  int top = 8;                      // heuristic candidates per GEMM
  bool exhaustive = false;          // the full algorithm space instead of the heuristic's top-N
  int max_candidates = 0;           // cap on the exhaustive list per GEMM (bases and heuristic choice first); 0: none
  // Two phases per GEMM shape: every verified candidate is screened with `screen` (a few samples of the
  // shape's own GEMM calls of one forward, replayed alone), then the heuristic's choice and the `finalists`
  // fastest screened are measured with `measure` as whole forwards, and the fastest of those wins.
  // finalists < 0: every candidate the screen kept to its end is re-measured.
  MeasureSettings screen = screening_settings(MeasureSettings(), 3);
  // Before it is verified, a candidate is probed: one sample of the shape's first `probe_calls` calls (0:
  // the screen's calls). One whose probe is over `screen_cutoff` times the fastest probe of a verified
  // candidate so far cannot be near the winner: it is cut there (status "cut"), neither verified nor
  // sampled further. 0 turns the probe off: every candidate is verified and screened fully.
  double screen_cutoff = 1.5;
  int probe_calls = 4;
  // The probe only ranks: when it replays fewer calls than a screen sample (nested's 4 of 32) it runs with L2
  // as the previous probe left it, unless `probe_flush`; a probe that is the screen's first sample (a batched
  // strategy's one call) flushes L2 as every screen sample does.
  bool probe_flush = false;
  // The grouped probe of an exhaustive search (tune/candidate_groups.hpp, docs/tuning.md step 2): one
  // representative per base configuration (algorithm, tile, stages, split-K) is probed first, and the variants
  // (swizzle, custom option, cluster shape) of a base whose representative is over `group_margin` times the
  // fastest verified probe are not probed at all. 0: every candidate is probed. Under halving only.
  double group_margin = 1.5;
  // How the candidates within the probe cutoff are screened: by successive halving (the default), or each with
  // `screen`'s samples (halving.keep = 0).
  HalvingRule halving;
  // The screen replays at most this many of the shape's calls (the first; 0: all). Batched strategies make
  // one call per shape; nested makes one per head and page, 384 at the default grid, and its candidates run
  // to 10^5 under exhaustive search.
  int screen_calls = 32;
  int finalists = 4;
  MeasureSettings measure;          // how each finalist (and each fused tile) is timed
  bool dry_run = false;             // only enumerate: GEMM candidates and fused tiles are listed, nothing runs
  StrategyOptions strategy;         // base options (score precision); config is set per tile
  std::uint64_t seed = 1234;
  std::int64_t max_memory = 0;      // bytes; 0 = the device's free memory (estimated before allocating, as run does)
  bool quiet = false;               // no progress line or per-shape messages
  // With it, GEMM shapes and fused problems that already have an entry for this environment are not
  // re-tuned: their cached choice is applied (source "cache") while the remaining plans are tuned.
  const HeuristicCache* skip_cached = nullptr;
  // Called after each problem with every entry found so far (to checkpoint the cache file). Not called once a
  // stop was requested (SIGINT/SIGTERM, core/stop_request.hpp): what was measured after it is cut short.
  std::function<void(const HeuristicCache&)> checkpoint;
  // Plugin strategies (Strategy::runs_isolated): one trial of configuration `config` on problem `index`,
  // verified and timed where a crash or hang costs only that trial (a child process with a time limit,
  // orchestrate/plugin_process.hpp); returns its row. Unset: plugins are not tuned (a note says so).
  std::function<ResultRow(std::size_t index, const Problem&, const Strategy&, const std::string& config)> plugin_trial;
  // Which grid indices to tune (a shard, less what a resumed journal holds); unset: every problem.
  std::function<bool(std::size_t)> include;
  // Called with a problem's grid index once every strategy of it is tuned and checkpointed (not for a
  // problem cut short by a stop request).
  std::function<void(std::size_t)> problem_done;

  // A search split below the problem (tune --devices with --search=exhaustive, orchestrate/tune_split.hpp) runs the
  // same phases in several processes; these let one tune_grid call do its part of it.
  // Candidate lists by shape key, kept across the tune_grid calls of one process (listing is deterministic
  // for one cuBLASLt and device, and a non-batched shape takes ~1 s to list); unset: listed every time.
  std::map<std::string, ListedCandidates>* listed = nullptr;
  // A screening unit: only phase 1 of shape screen_range->key, on its candidates [lo, hi); the record holds
  // their outcomes (the others' status stays empty) and no winner. Other shapes are not searched.
  std::optional<ScreenRange> screen_range;
  // The fastest probe of a verified candidate by shape key, kept across the screening units one process runs:
  // a unit's probe cutoff and group margin start from it instead of from nothing, as one process screening the
  // whole list would (the same device and probe calls, so the times compare). Unset: each unit starts afresh.
  std::map<std::string, double>* probe_bounds = nullptr;
  // Shapes screened by screening units: their phase-1 outcomes (every candidate), so that phases 2-3 (the
  // finalists re-measured and re-checked here, on one device) choose the winner.
  const std::map<std::string, ScreenedShape>* screened = nullptr;
  // Shapes another unit of the run tunes (an earlier problem makes them): left at their current algorithm
  // and not searched here, as a one-process tune reuses a shape tuned earlier in the run.
  std::set<std::string> tuned_elsewhere;
};

// One candidate algorithm or tile and what happened to it.
struct CandidateOutcome {
  std::string label;
  bool baseline = false;   // the heuristic's first choice (GEMM) or the default tile (fused)
  // "ok", "failed" (could not be set or run), "incorrect" (wrong output), "cut" (GEMM candidates: its probe
  // was over the screen cutoff; not verified, never a finalist)
  std::string status;
  std::string reason;
  double ms = 0;           // median forward time of the full measurement (finalists and fused tiles), when ok
  double noise = 0;
  double screen_ms = 0;    // GEMM candidates: median time of the shape's own GEMM calls of a forward, screened alone
  // GEMM candidates: screening samples of the screen's calls taken (0 for a cut candidate whose probe
  // replayed fewer calls; its screen_ms is then its probe scaled to the screen's call count)
  int screen_samples = 0;
  double probe_ms = 0;     // GEMM candidates: the probe (one sample of the first probe_calls calls)
  // GEMM candidates under successive halving: the stage whose ranking dropped it (1 for the first ranked stage,
  // ...), its screen_ms and screen_samples then that stage's; 0 when none did. A dropped candidate is no
  // contender for the finalists (finalist_indices): its time came from fewer samples than the final round's.
  // The grouped probe's stage is a ranking too: a member of a group it dropped that was never probed is "cut"
  // with no time (probe_ms and screen_ms 0).
  int dropped_at = 0;
  bool finalist = false;   // GEMM candidates: re-measured with the full settings
  // GEMM: the finalists' winner and the heuristic's choice are measured once more, independently of the
  // choice, and `ms` then holds that time; `finalist_ms` keeps the one the winner was chosen on.
  double finalist_ms = 0;
  std::vector<std::string> warnings;  // from the measurement engine (timer fallback, clock changes...)
};

// A shape's candidate list, as the search builds it (tune/gemm_search.cpp).
// Candidate i of `c`, or null when there is none (a dry run times nothing: its records index tiles or algorithms
// that have no outcome).
inline const CandidateOutcome* candidate_at(const std::vector<CandidateOutcome>& c, int i) {
  return i >= 0 && static_cast<std::size_t>(i) < c.size() ? &c[static_cast<std::size_t>(i)] : nullptr;
}
// Its time when it passed, else 0.
inline double ok_ms(const std::vector<CandidateOutcome>& c, int i) {
  const CandidateOutcome* x = candidate_at(c, i);
  return x && x->status == "ok" ? x->ms : 0;
}

struct ListedCandidates {
  std::vector<GemmAlgo> algos;
  int heuristic_top = 0;
};

// Phase 1's outcomes of every candidate of a shape, gathered from the screening units of a split search.
struct ScreenedShape {
  std::vector<CandidateOutcome> candidates;  // status "" for none (never screened)
  double verify_s = 0, screen_s = 0;         // summed over the units
  std::vector<ScreenStage> stages;           // summed over the units, stage by stage (add_screen_stages)
};

// A distinct GEMM (GemmShape::key) tuned once, inside the first strategy and problem that made it.
struct GemmTuneRecord {
  std::string key;
  GemmShape shape;
  std::string strategy;
  Problem problem;
  int plans = 0;                       // plans of that strategy sharing the shape (switched together)
  std::vector<GemmAlgo> algos;         // candidates, in the order tried
  std::vector<CandidateOutcome> candidates;
  int best = -1;                       // index of the fastest correct candidate, -1 when none
  int baseline = -1;                   // index of the heuristic's first choice
  std::string verified_on;              // the problem whose forward verified each candidate (B=1 H=1 for nested)
  int own_calls = 0, screen_calls = 0; // the shape's GEMM calls in one forward, and how many the screen replays
  int probe_calls = 0;                 // how many of those the probe replays (0: no probe, --screen_cutoff=0)
  int heuristic_top = 0;               // exhaustive: the first candidates are the heuristic's top-N, this many
  std::vector<ScreenStage> stages;     // how the screen went, stage by stage (tune/shape_screen.hpp)
  // Wall time of each part of the search: listing candidates, verifying forwards, screening, re-measuring.
  double enumerate_s = 0, verify_s = 0, screen_s = 0, confirm_s = 0;
  double best_ms() const { return ok_ms(candidates, best); }
  double baseline_ms() const { return ok_ms(candidates, baseline); }
  double gain() const { return best_ms() > 0 && baseline_ms() > 0 ? baseline_ms() / best_ms() : 0; }
  int failed() const;     // neither ok nor cut
  int cut() const;
  int finalists() const;
};

// The fused tile search of one problem.
struct FusedTuneRecord {
  Problem problem;
  std::vector<FusedTile> tiles;        // tiles that can implement the problem, in backend order
  std::vector<CandidateOutcome> candidates;
  int best = -1;
  int baseline = -1;                   // the default tile (the backend's first that can implement)
  // Tile i's label: its outcome's, or in a dry run (no outcomes) the listed tile's name; "" when neither.
  std::string tile_label(int i) const {
    if (const CandidateOutcome* c = candidate_at(candidates, i)) return c->label;
    return i >= 0 && static_cast<std::size_t>(i) < tiles.size() ? tiles[static_cast<std::size_t>(i)].name() : "";
  }
  double best_ms() const { return ok_ms(candidates, best); }
  double baseline_ms() const { return ok_ms(candidates, baseline); }
  double gain() const { return best_ms() > 0 && baseline_ms() > 0 ? baseline_ms() / best_ms() : 0; }
  int failed() const;
};

// A plugin's configurations tried on one problem.
struct PluginTuneRecord {
  Problem problem;
  std::string strategy;                 // "plugin:<name>"
  std::vector<CandidateOutcome> candidates;  // one per configuration, the default first
  int best = -1;                        // fastest ok candidate, -1 when none passed
  double best_ms() const { return ok_ms(candidates, best); }
};

struct TuneOutcome {
  CacheEnvironment env;
  HeuristicCache cache;                // every entry found by this run (environment included)
  std::vector<GemmTuneRecord> gemm;
  std::vector<FusedTuneRecord> fused;
  std::vector<PluginTuneRecord> plugins;
  int reused_plans = 0;                // plan groups served by a shape tuned earlier in this run
  int cached_plans = 0;                // plan groups served by skip_cached
  int failed_strategies = 0;           // (problem, strategy) pairs that hit a device error
  std::vector<std::string> notes;      // unsupported or failed strategies, shapes with no correct candidate
  double wall_s = 0;
  bool dry_run = false;                // records hold candidate lists only
};

}  // namespace ab

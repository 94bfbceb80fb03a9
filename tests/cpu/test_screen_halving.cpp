// Successive halving of the tune's screen (tune/screen_halving.hpp, tune/shape_screen.hpp): the rule alone (the
// fastest fraction, the noise band, the protected heuristic's choice), then whole tunes on the CPU backend
// behind a stand-in cuBLASLt (cpu/spread_lt.hpp) whose 400 candidates per shape differ only in time (virtual ms
// per call with a deterministic ±0.5% noise): the true best reaches the final round and wins, halving replays
// far fewer GEMM calls than the screen without it, a group of candidates as fast as the best within the noise
// is never dropped without a band limit and limited with one (the winner still one of them), and the stages
// are recorded in the record, the cache entry and the summary.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.hpp"
#include "cpu/spread_lt.hpp"
#include "tune/gemm_search.hpp"
#include "tune/screen_halving.hpp"
#include "tune/tune_summary.hpp"
#include "tune/tune_summary_formats.hpp"
#include "tune/tuner.hpp"

using namespace ab;
using ab_test::SpreadLt;
using ab_test::quick_measure;

namespace {

// ---- the rule ------------------------------------------------------------------------------------------

HalvingRule rule(double keep, int final_round, double band) {
  HalvingRule h;
  h.keep = keep;
  h.final_round = final_round;
  h.band = band;
  return h;
}

std::vector<std::size_t> kept_of(const std::vector<bool>& keep) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) out.push_back(i);
  return out;
}

}  // namespace

TEST(ScreenHalving, AStageKeepsTheFastestFractionAndEveryOneWithinTheBand) {
  // 12 times: the fastest quarter (3) go on, and 8 (1.02) too: within the 3% band of the fastest (1.0).
  const std::vector<double> ms = {1.5, 1.0, 1.2, 1.02, 1.3, 1.1, 1.4, 1.05, 1.25, 1.35, 1.45, 1.01};
  const std::vector<bool> none(ms.size(), false);
  EXPECT_EQ(kept_of(halving_keeps(ms, none, rule(0.25, 2, 0.03), 0.03)), (std::vector<std::size_t>{1, 3, 11}));
  // A wider band keeps 1.05 as well; no band keeps the quota alone.
  EXPECT_EQ(kept_of(halving_keeps(ms, none, rule(0.25, 2, 0.03), 0.06)), (std::vector<std::size_t>{1, 3, 7, 11}));
  EXPECT_EQ(kept_of(halving_keeps(ms, none, rule(0.25, 2, 0.03), 0.0)), (std::vector<std::size_t>{1, 3, 11}));
  // The quota is never below the final round, and a protected candidate (the heuristic's choice) always goes on.
  EXPECT_EQ(kept_of(halving_keeps(ms, none, rule(0.1, 4, 0.0), 0.0)), (std::vector<std::size_t>{1, 3, 7, 11}));
  std::vector<bool> first(ms.size(), false);
  first[0] = true;  // the slowest, but the heuristic's choice: it goes on, outside the count
  EXPECT_EQ(kept_of(halving_keeps(ms, first, rule(0.1, 2, 0.0), 0.0)), (std::vector<std::size_t>{0, 1, 11}));
  // At most the final round's candidates (the protected one not counted): all go on; an untimed one (0) always does.
  EXPECT_EQ(kept_of(halving_keeps({3, 1, 2}, {}, rule(0.25, 3, 0.0), 0.0)).size(), 3u);
  EXPECT_EQ(kept_of(halving_keeps({3, 1, 2, 4}, {false, false, false, true}, rule(0.25, 3, 0.0), 0.0)).size(), 4u);
  EXPECT_EQ(kept_of(halving_keeps({0, 5, 1, 2, 3, 4}, {}, rule(0.25, 1, 0.0), 0.0)), (std::vector<std::size_t>{0, 2, 3}));
  // Equal times: the earlier goes first (and a time equal to the fastest is within any band).
  EXPECT_EQ(kept_of(halving_keeps({2, 1.5, 1.5, 1}, {}, rule(0.5, 1, 0.0), 0.0)), (std::vector<std::size_t>{1, 3}));
  EXPECT_EQ(kept_of(halving_keeps({2, 1, 1, 3}, {}, rule(0.25, 1, 0.0), 0.0)), (std::vector<std::size_t>{1, 2}));
  // The band's ties are limited to band_limit times the quota: 16 times within 1% of each other, a quota of 4
  // (a quarter), at most 6 go on (the 6 fastest), a protected one besides; with no limit, all 16; a limit of 1,
  // the quota alone.
  std::vector<double> ties;
  for (int k = 0; k < 16; ++k) ties.push_back(1.0 + 0.0005 * ((k * 7) % 16));
  EXPECT_EQ(kept_of(halving_keeps(ties, {}, rule(0.25, 2, 0.03), 0.03)).size(), 6u);
  std::vector<std::size_t> fastest6;
  for (std::size_t k = 0; k < 16; ++k)
    if ((k * 7) % 16 < 6) fastest6.push_back(k);
  EXPECT_EQ(kept_of(halving_keeps(ties, {}, rule(0.25, 2, 0.03), 0.03)), fastest6);
  std::vector<bool> last(16, false);
  last[15] = true;
  EXPECT_EQ(kept_of(halving_keeps(ties, last, rule(0.25, 2, 0.03), 0.03)).size(), 7u) << "4 x 1.5 of 15, and the protected";
  HalvingRule unlimited = rule(0.25, 2, 0.03), exact = rule(0.25, 2, 0.03);
  unlimited.band_limit = 0;
  exact.band_limit = 1;
  EXPECT_EQ(kept_of(halving_keeps(ties, {}, unlimited, 0.03)).size(), 16u);
  EXPECT_EQ(kept_of(halving_keeps(ties, {}, exact, 0.03)).size(), 4u);
}

TEST(ScreenHalving, TheBandWidensForFewerCallsAndNarrowsWithSamples) {
  const HalvingRule h = rule(0.25, 8, 0.03);
  EXPECT_DOUBLE_EQ(stage_band(h, 32, 32, 1), 0.03);
  EXPECT_NEAR(stage_band(h, 4, 32, 1), 0.03 * std::sqrt(8.0), 1e-12);   // the probe's 4 of 32 calls
  EXPECT_NEAR(stage_band(h, 32, 32, 4), 0.015, 1e-12);                  // a median of 4 samples
  EXPECT_DOUBLE_EQ(stage_band(h, 1, 1, 1), 0.03);                       // a batched strategy's one call
}

TEST(ScreenHalving, UnitsStagesAddUpStageByStage) {
  std::vector<ScreenStage> all;
  add_screen_stages(all, {{"probe", 4, 1, 100, 40, 10, 400}, {"halving", 32, 1, 10, 10, 3, 320},
                          {"final", 32, 3, 3, 3, 3, 288}});
  // A unit whose pool was small enough for one halving stage fewer, and one that ran one more.
  add_screen_stages(all, {{"probe", 4, 1, 100, 30, 8, 400}, {"final", 32, 3, 8, 8, 8, 768}});
  add_screen_stages(all, {{"probe", 4, 1, 100, 50, 13, 400}, {"halving", 32, 1, 13, 12, 4, 416},
                          {"halving", 32, 2, 4, 4, 2, 128}, {"final", 32, 3, 2, 2, 2, 192}});
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].kind, "probe");
  EXPECT_EQ(all[0].entered, 300u);
  EXPECT_EQ(all[0].passed, 120u);
  EXPECT_EQ(all[0].kept, 31u);
  EXPECT_EQ(all[1].samples, 1);
  EXPECT_EQ(all[1].entered, 23u);
  EXPECT_EQ(all[2].samples, 2);
  EXPECT_EQ(all[2].entered, 4u);
  EXPECT_EQ(all[3].kind, "final");
  EXPECT_EQ(all[3].entered, 13u);
  EXPECT_EQ(all[3].calls_spent, 288 + 768 + 192);
  // Without halving the 120 within the cutoff would each have had 3 samples of 32 calls after the probe.
  EXPECT_EQ(unhalved_screen_calls(all), 1200 + 120 * 3 * 32);
  // A probe that is the screen's first sample (one call, a batched strategy) counts as one of the 3.
  EXPECT_EQ(unhalved_screen_calls({{"probe", 1, 1, 10, 6, 2, 10}, {"final", 1, 3, 2, 2, 2, 6}}), 10 + 6 * 2);
  EXPECT_EQ(unhalved_screen_calls({{"halving", 32, 1, 10, 10, 4, 320}, {"final", 32, 3, 4, 4, 4, 384}}), 10 * 3 * 32);
  EXPECT_EQ(screen_stages_cell(all), "300>23>4>13");
}

TEST(ScreenHalving, AHalvingDroppedCandidateIsNoFinalistButAHeuristicTopOneStillIs) {
  GemmTuneRecord r;
  for (int i = 0; i < 6; ++i) {
    CandidateOutcome c;
    c.status = "ok";
    c.screen_ms = 1 + i;
    r.candidates.push_back(c);
  }
  r.baseline = 0;
  r.candidates[1].dropped_at = 2;  // the fastest one-sample time, dropped by a later stage: no contender
  r.candidates[2].status = "cut";
  r.candidates[2].dropped_at = 1;  // dropped on its probe
  EXPECT_EQ(finalist_indices(r, 2), (std::vector<int>{0, 3, 4}));
  r.heuristic_top = 3;  // an exhaustive list's heuristic top-3 are re-measured whatever the screen said
  EXPECT_EQ(finalist_indices(r, 2), (std::vector<int>{0, 3, 4, 1, 2}));
}

// ---- whole tunes -------------------------------------------------------------------------------------------

namespace {

constexpr int kCandidates = 400;
constexpr int kBest = 257;  // the true best, 1.000 ms a call

// 400 candidates: c0 (the heuristic's choice) 1.30 ms a call; c257 the best, 1.000; `equal` more at exactly
// 1.000 (indices 31, 62, ...); every fifth of the rest over the 1.5x cutoff (1.6-3.0), the others within it
// (1.05-1.45), spread over the list so that the cutoff, relative to the fastest so far, lets many through.
std::vector<double> costs(int equal) {
  std::vector<double> c(kCandidates);
  for (int k = 0; k < kCandidates; ++k)
    c[static_cast<std::size_t>(k)] = k % 5 == 4 ? 1.6 + 1.4 * ((k * 37) % 100) / 100.0 : 1.05 + 0.4 * ((k * 53) % 100) / 100.0;
  c[0] = 1.30;
  c[kBest] = 1.0;
  for (int j = 1; j <= equal; ++j) c[static_cast<std::size_t>(31 * j)] = 1.0;
  return c;
}

// A tune of head_batched (one call per shape: the probe is the screen's first sample) on a small problem,
// every candidate listed (top = 400), halving as `h`.
TuneOptions options(const HalvingRule& h, const std::string& strategy = "head_batched") {
  TuneOptions opt;
  opt.problems = {make_problem(1, 2, 32, 16, 1, 0, KvLayout::contiguous, DType::fp16, false)};
  opt.strategies = strategy;
  opt.measure = quick_measure();
  opt.screen = screening_settings(quick_measure(), 3);
  opt.top = kCandidates;
  opt.halving = h;
  opt.quiet = true;
  return opt;
}

struct Tuned {
  TuneOutcome out;
  std::int64_t calls = 0;
};

Tuned tune(const std::vector<double>& cost, const TuneOptions& opt) {
  auto cpu = make_cpu_backend();
  SpreadLt lt(*cpu, cost);
  Tuned t{tune_grid(lt, opt), 0};
  t.calls = lt.calls;
  return t;
}

std::int64_t stage_calls(const GemmTuneRecord& r) {
  std::int64_t n = 0;
  for (const ScreenStage& s : r.stages) n += s.calls_spent;
  return n;
}

int index_of(const std::string& label) { return std::stoi(label.substr(1)); }

// The stages chain: every stage after the first takes the candidates the one before kept.
void expect_chained(const GemmTuneRecord& r) {
  ASSERT_GE(r.stages.size(), 2u);
  for (std::size_t k = 1; k < r.stages.size(); ++k) EXPECT_EQ(r.stages[k].entered, r.stages[k - 1].kept) << k;
  for (const ScreenStage& s : r.stages) {
    EXPECT_LE(s.passed, s.entered);
    EXPECT_LE(s.kept, s.passed);
  }
}

}  // namespace

TEST(ScreenHalving, TheTrueBestReachesTheFinalRoundAndWinsWithFarFewerCalls) {
  const std::vector<double> cost = costs(0);
  Tuned on = tune(cost, options(rule(0.25, 8, 0.03)));
  Tuned off = tune(cost, options(rule(0, 8, 0.03)));
  ASSERT_EQ(on.out.gemm.size(), 2u);
  ASSERT_EQ(off.out.gemm.size(), 2u);
  for (std::size_t s = 0; s < 2; ++s) {
    const GemmTuneRecord& r = on.out.gemm[s];
    ASSERT_GE(r.best, 0);
    EXPECT_EQ(r.candidates[static_cast<std::size_t>(r.best)].label, "c257");
    EXPECT_EQ(off.out.gemm[s].candidates[static_cast<std::size_t>(off.out.gemm[s].best)].label, "c257");
    const CandidateOutcome& best = r.candidates[kBest];
    EXPECT_EQ(best.status, "ok");
    EXPECT_EQ(best.dropped_at, 0);
    EXPECT_EQ(best.screen_samples, 3);  // fresh samples in the final round
    EXPECT_TRUE(best.finalist);
    // The stages: the probe (one call: a batched strategy's probe is its first screen sample), halving stages of
    // one more sample each, and a final round of at most 8 (the heuristic's choice among them, always kept).
    expect_chained(r);
    EXPECT_EQ(r.stages.front().kind, "probe");
    EXPECT_EQ(r.stages.front().entered, static_cast<std::size_t>(kCandidates));
    EXPECT_GT(r.stages.front().passed, 200u);
    EXPECT_EQ(r.stages.front().kept, (r.stages.front().passed - 1 + 3) / 4 + 1) << "a quarter, and the heuristic's choice";
    EXPECT_EQ(r.stages[1].kind, "halving");
    EXPECT_EQ(r.stages[1].samples, 2);
    EXPECT_EQ(r.stages.back().kind, "final");
    EXPECT_LE(r.stages.back().entered, 9u) << "8, and the heuristic's choice";
    EXPECT_EQ(r.candidates[0].dropped_at, 0) << "the heuristic's choice is never dropped";
    EXPECT_EQ(r.candidates[0].status, "ok");
    // Without halving every candidate within the cutoff got 3 samples: the same as the stages' estimate of it.
    const GemmTuneRecord& full = off.out.gemm[s];
    ASSERT_EQ(full.stages.size(), 2u);
    EXPECT_EQ(full.stages[0].passed, r.stages.front().passed) << "the same probe cutoff";
    EXPECT_EQ(stage_calls(full), unhalved_screen_calls(r.stages));
    // Past the probe (which both take), a quarter of the calls at most: ~80 candidates get a second sample
    // instead of ~320 getting two more.
    const std::int64_t probe = r.stages.front().calls_spent;
    EXPECT_EQ(full.stages.front().calls_spent, probe);
    EXPECT_LT((stage_calls(r) - probe) * 4, stage_calls(full) - probe) << screen_stages_label(r.stages);
    for (const CandidateOutcome& c : full.candidates) EXPECT_EQ(c.dropped_at, 0);
  }
  // Counted by the stand-in itself over the whole tune (the probes, verification forwards and finalists included).
  EXPECT_LT(on.calls * 5, off.calls * 3) << "halving " << on.calls << " GEMM calls, without " << off.calls;
}

TEST(ScreenHalving, WithoutALimitCandidatesAsFastAsTheBestWithinTheNoiseAreNeverDropped) {
  // Nine candidates at the best's 1.000 ms: within ±0.5% noise of each other, inside every stage's band (3%
  // for one sample, 3%/√8 for the most a stage takes): with no band limit all reach the final round although
  // it is for 2.
  const std::vector<double> cost = costs(8);
  HalvingRule h = rule(0.25, 2, 0.03);
  h.band_limit = 0;
  Tuned t = tune(cost, options(h));
  ASSERT_EQ(t.out.gemm.size(), 2u);
  for (const GemmTuneRecord& r : t.out.gemm) {
    expect_chained(r);
    for (std::size_t k = 0; k < r.candidates.size(); ++k) {
      const CandidateOutcome& c = r.candidates[k];
      if (cost[k] == 1.0) {
        EXPECT_EQ(c.dropped_at, 0) << c.label << ": " << screen_stages_label(r.stages);
        EXPECT_EQ(c.status, "ok") << c.label;
        EXPECT_EQ(c.screen_samples, 3) << c.label;
      } else if (k != 0) {
        EXPECT_TRUE(c.dropped_at > 0 || c.status == "cut") << c.label << " (" << cost[k] << " ms) went on";
      }
    }
    EXPECT_EQ(r.stages.back().entered, 10u) << "the nine and the heuristic's choice";
    ASSERT_GE(r.best, 0);
    EXPECT_EQ(cost[static_cast<std::size_t>(index_of(r.candidates[static_cast<std::size_t>(r.best)].label))], 1.0);
  }
}

TEST(ScreenHalving, TheBandsTiesAreLimitedAndTheWinnerIsOneOfThem) {
  // The same nine ties under the default limit (1.5x the quota): each stage keeps at most ceil(1.5 quota) of
  // them, so the final round holds at most 3 (its quota of 2, x1.5) and the heuristic's choice; every one of
  // those is a tie, so the winner is still a 1.000 ms candidate; and every stage's kept count is within the
  // limit.
  const std::vector<double> cost = costs(8);
  const HalvingRule h = rule(0.25, 2, 0.03);
  ASSERT_EQ(h.band_limit, 1.5) << "the default";
  Tuned t = tune(cost, options(h));
  ASSERT_EQ(t.out.gemm.size(), 2u);
  for (const GemmTuneRecord& r : t.out.gemm) {
    expect_chained(r);
    for (const ScreenStage& st : r.stages) {
      if (st.kind == "final" || st.kind == "group") continue;
      const std::size_t ranked = st.passed - 1;  // the heuristic's choice is outside the count
      if (ranked <= 2) continue;
      const std::size_t quota = std::max<std::size_t>(2, (ranked + 3) / 4);
      const std::size_t limit = (3 * quota + 1) / 2;
      EXPECT_LE(st.kept, limit + 1) << st.kind << " " << st.samples << ": " << screen_stages_label(r.stages);
    }
    EXPECT_LE(r.stages.back().entered, 4u) << screen_stages_label(r.stages);
    std::size_t ties_left = 0;
    for (std::size_t k = 0; k < r.candidates.size(); ++k)
      ties_left += cost[k] == 1.0 && r.candidates[k].dropped_at == 0 && r.candidates[k].status == "ok";
    EXPECT_GE(ties_left, 1u);
    EXPECT_LE(ties_left, 3u) << "ties past the limit are dropped";
    ASSERT_GE(r.best, 0);
    EXPECT_EQ(cost[static_cast<std::size_t>(index_of(r.candidates[static_cast<std::size_t>(r.best)].label))], 1.0);
  }
}

TEST(ScreenHalving, ABestJustFasterThanACrowdOfTiesStillWinsUnderTheLimit) {
  // Forty near-ties at 1.015 ms (inside every stage's band of the best), the true best at 1.000: the limit drops
  // most of the crowd at each stage, but ranks them on their times, so the best, faster by more than the ±0.5%
  // noise, is always among those kept and wins; without a limit the same best wins with many more calls.
  std::vector<double> cost = costs(0);
  for (int j = 1; j <= 40; ++j) cost[static_cast<std::size_t>(7 * j)] = 1.015;
  HalvingRule limited = rule(0.25, 4, 0.03), unlimited = rule(0.25, 4, 0.03);
  unlimited.band_limit = 0;
  Tuned a = tune(cost, options(limited)), b = tune(cost, options(unlimited));
  ASSERT_EQ(a.out.gemm.size(), 2u);
  for (std::size_t s = 0; s < 2; ++s) {
    const GemmTuneRecord& r = a.out.gemm[s];
    ASSERT_GE(r.best, 0);
    EXPECT_EQ(r.candidates[static_cast<std::size_t>(r.best)].label, "c257") << screen_stages_label(r.stages);
    EXPECT_EQ(r.candidates[kBest].dropped_at, 0);
    EXPECT_LE(r.stages.back().entered, 7u) << "the final round: at most 1.5 x 4, and the heuristic's choice";
    EXPECT_EQ(b.out.gemm[s].candidates[static_cast<std::size_t>(b.out.gemm[s].best)].label, "c257");
  }
  EXPECT_LT(a.calls, b.calls) << "the limit saves samples of the crowd";
}

TEST(ScreenHalving, AProbeOfFewerCallsIsRankedInItsWiderBand) {
  // nested: two calls of each shape per forward (one per head); a probe of one call is not a screen sample, so
  // the first ranking is on the probe (band 3% x √2) and the first halving stage verifies and takes one sample.
  TuneOptions opt = options(rule(0.25, 4, 0.03), "nested");
  opt.probe_calls = 1;
  const std::vector<double> cost = costs(0);
  Tuned t = tune(cost, opt);
  ASSERT_EQ(t.out.gemm.size(), 2u);
  for (const GemmTuneRecord& r : t.out.gemm) {
    expect_chained(r);
    EXPECT_EQ(r.probe_calls, 1);
    EXPECT_EQ(r.screen_calls, 2);
    EXPECT_EQ(r.stages.front().calls, 1);
    EXPECT_EQ(r.stages[1].samples, 1);
    EXPECT_EQ(r.stages[1].calls, 2);
    // Dropped on the probe: "cut", never verified (but the few verified at once for being the fastest so far
    // when probed), its time the probe scaled to the screen's two calls.
    int cut = 0, verified = 0;
    for (const CandidateOutcome& c : r.candidates)
      if (c.dropped_at == 1) {
        (c.status == "cut" ? cut : verified)++;
        EXPECT_TRUE(c.status == "cut" || c.status == "ok") << c.status;
        EXPECT_DOUBLE_EQ(c.screen_ms, 2 * c.probe_ms);
        EXPECT_EQ(c.screen_samples, 0);
      }
    EXPECT_EQ(static_cast<std::size_t>(cut + verified), r.stages.front().passed - r.stages.front().kept);
    EXPECT_GT(cut, 150);
    EXPECT_LT(verified, 10);
    ASSERT_GE(r.best, 0);
    EXPECT_EQ(r.candidates[static_cast<std::size_t>(r.best)].label, "c257");
  }
}

TEST(ScreenHalving, TheCacheAndTheSummaryRecordTheStages) {
  Tuned t = tune(costs(0), options(rule(0.25, 8, 0.03)));
  ASSERT_EQ(t.out.cache.gemm_entries().size(), 2u);
  for (const GemmCacheEntry& e : t.out.cache.gemm_entries()) {
    const nlohmann::json& m = e.measured_with;
    EXPECT_EQ(m.at("halving"), (nlohmann::json{{"keep", 0.25}, {"final", 8}, {"band", 0.03}, {"band_limit", 1.5}}));
    ASSERT_TRUE(m.at("stages").is_array());
    EXPECT_EQ(m.at("stages").front().at("kind"), "probe");
    EXPECT_EQ(m.at("stages").front().at("entered"), kCandidates);
    EXPECT_EQ(m.at("stages").back().at("kind"), "final");
  }
  const std::string text = format_tune_summary(t.out);
  EXPECT_NE(text.find("screen stages (candidates in -> going on):"), std::string::npos) << text;
  EXPECT_NE(text.find("probe (1 call) 400 -> "), std::string::npos) << text;
  EXPECT_NE(text.find("a screen without halving takes"), std::string::npos) << text;
  nlohmann::json summary = nlohmann::json::parse(render_tune_summary(t.out, "json"));
  for (const nlohmann::json& row : summary.at("rows")) {
    ASSERT_TRUE(row.at("stages").is_array());
    EXPECT_EQ(row.at("stages").front().at("entered"), kCandidates);
  }
  const std::string csv = render_tune_summary(t.out, "csv");
  EXPECT_NE(csv.find(",stages\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",400>"), std::string::npos) << csv;
  // Off: the cache says so, and the stages are the probe and the one screen.
  Tuned off = tune(costs(0), options(rule(0, 8, 0.03)));
  for (const GemmCacheEntry& e : off.out.cache.gemm_entries()) {
    EXPECT_TRUE(e.measured_with.at("halving").is_null());
    EXPECT_EQ(e.measured_with.at("stages").size(), 2u);
  }
}

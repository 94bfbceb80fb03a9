// The grouped probe of an exhaustive tune (tune/candidate_groups.hpp, tune/shape_screen.cpp, docs/tuning.md
// step 2): the grouping rule alone (base key, representative, margin), then whole tunes on the CPU backend behind
// the stand-in cuBLASLt of tests/cpu/spread_lt.hpp on the virtual clock, its 400 candidates being 40 bases of 10
// members each (the base and 9 variants: cluster shape, custom option, swizzle). The winner's base is probed
// 1.4x slower than the fastest base, within the 1.5x margin: its variants are probed and the winner found.
// Bases over the margin have no variant probed, not even one faster than the winner (which a tune without
// grouping finds: the margin's bet is that no variant beats its base by that much); with a margin of 1.3 the
// winner's base is dropped too, and the winner lost. The heuristic's choice is always probed and re-measured;
// the probe of fewer calls than the screen runs without an L2 flush; the group stage is recorded in the
// record, the cache and the summary (and the cache's grouping only where one ran); a group about to be dropped
// is probed again first, so a stall in one probe does not drop the winner's group.
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.hpp"
#include "cpu/spread_lt.hpp"
#include "tune/candidate_groups.hpp"
#include "tune/screen_halving.hpp"
#include "tune/tune_summary.hpp"
#include "tune/tune_summary_formats.hpp"
#include "tune/tuner.hpp"

using namespace ab;
using ab_test::SpreadLt;
using ab_test::quick_measure;

namespace {

// ---- the rule ------------------------------------------------------------------------------------------

GemmAlgo lt_algo(int id, int split, int swizzle, int custom, int cluster) {
  GemmAlgo a;
  a.label = "algo " + std::to_string(id);
  a.attrs = {{"ALGO_ID", id},      {"TILE_ID", 20},           {"STAGES_ID", 8},        {"SPLITK_NUM", split},
             {"REDUCTION_SCHEME", split > 1 ? 1 : 0},       {"CTA_SWIZZLING", swizzle}, {"CUSTOM_OPTION", custom},
             {"CLUSTER_SHAPE_ID", cluster}, {"INNER_SHAPE_ID", 0}};
  return a;
}

std::vector<std::vector<std::size_t>> members_of(const std::vector<CandidateGroup>& groups) {
  std::vector<std::vector<std::size_t>> out;
  for (const CandidateGroup& g : groups) out.push_back(g.members);
  return out;
}

}  // namespace

TEST(GroupProbe, VariantsOfOneBaseShareAGroupRepresentedByTheFewestChanges) {
  GemmAlgo loose;  // not a cuBLASLt configuration: a group of its own, as is its twin
  loose.attrs = {{"K", 5}};
  const std::vector<GemmAlgo> list = {
      lt_algo(66, 1, 0, 4, 3),  // 0: a heuristic pick: custom 4, cluster 3 of algo 66's base
      lt_algo(66, 1, 0, 0, 0),  // 1: that base
      lt_algo(66, 4, 0, 0, 0),  // 2: split-K 4: another base (other work, another reduction)
      lt_algo(66, 1, 1, 0, 0),  // 3: swizzled: algo 66's base again
      lt_algo(31, 1, 0, 0, 0),  // 4: another algorithm
      loose,                    // 5
      loose,                    // 6
      lt_algo(66, 4, 1, 2, 0),  // 7: split-K 4, swizzled, custom 2
  };
  EXPECT_EQ(variant_changes(list[0]), 2);
  EXPECT_EQ(variant_changes(list[1]), 0);
  EXPECT_EQ(variant_changes(list[7]), 2);
  EXPECT_EQ(candidate_group_key(list[0]), candidate_group_key(list[3]));
  EXPECT_NE(candidate_group_key(list[1]), candidate_group_key(list[2]));
  EXPECT_EQ(candidate_group_key(list[5]), "");
  const std::vector<CandidateGroup> groups = group_candidates(list, 0, list.size());
  EXPECT_EQ(members_of(groups), (std::vector<std::vector<std::size_t>>{{0, 1, 3}, {2, 7}, {4}, {5}, {6}}));
  EXPECT_EQ(groups[0].representative, 1u) << "the base, not the heuristic's variant listed first";
  EXPECT_EQ(groups[1].representative, 2u);
  EXPECT_TRUE(any_variants(groups));
  // A range: only its members, represented by its own fewest changes.
  const std::vector<CandidateGroup> tail = group_candidates(list, 2, 8);
  EXPECT_EQ(members_of(tail), (std::vector<std::vector<std::size_t>>{{2, 7}, {3}, {4}, {5}, {6}}));
  EXPECT_EQ(tail[1].representative, 3u);
  EXPECT_FALSE(any_variants(group_candidates(list, 3, 7)));
}

TEST(GroupProbe, AGroupGoesOnWithinTheMarginOfTheFastestOrWithoutATime) {
  // Best 1.0, margin 1.5: 1.5 goes on, 1.51 does not; a group none of whose members could be probed (0) goes on.
  EXPECT_EQ(groups_within_margin({1.0, 1.5, 1.51, 0, 3.0}, 1.0, 1.5), (std::vector<bool>{true, true, false, true, false}));
  EXPECT_EQ(groups_within_margin({1.0, 1.4}, 1.0, 1.3), (std::vector<bool>{true, false}));
  // No verified probe yet: nothing to compare with, every group goes on.
  EXPECT_EQ(groups_within_margin({2.0, 9.0}, 0, 1.5), (std::vector<bool>{true, true}));
}

TEST(GroupProbe, TheGroupStageSortsFirstAndCountsInTheUnhalvedEstimate) {
  std::vector<ScreenStage> all;
  add_screen_stages(all, {{"probe", 4, 1, 30, 10, 3, 120}, {"final", 32, 3, 3, 3, 3, 288}});
  add_screen_stages(all, {{"group", 4, 1, 100, 100, 30, 40}, {"probe", 4, 1, 30, 12, 4, 80},
                          {"final", 32, 3, 4, 4, 4, 384}});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].kind, "group");
  EXPECT_EQ(all[1].kind, "probe");
  EXPECT_EQ(all[1].entered, 60u);
  // Without grouping or halving: a probe of each of the group stage's 100, then 3 samples of 32 calls for each
  // of the 22 within the cutoff.
  EXPECT_EQ(unhalved_screen_calls(all), 100 * 4 + 22 * 3 * 32);
  EXPECT_EQ(screen_stages_cell(all), "100>60>7");
  const std::string label = screen_stages_label({{"group", 4, 1, 100, 100, 30, 40}, {"probe", 4, 1, 30, 12, 4, 80},
                                                 {"final", 32, 3, 4, 4, 4, 384}});
  EXPECT_NE(label.find("groups (4 calls) 100 -> 10 probes of representatives -> 30 in the groups within the margin"),
            std::string::npos) << label;
  EXPECT_NE(label.find("a screen without grouping or halving takes"), std::string::npos) << label;
}

// ---- whole tunes -------------------------------------------------------------------------------------------

namespace {

constexpr int kBases = 40, kVariants = 9, kCandidates = kBases * (1 + kVariants);
constexpr int kFastBase = 1;       // the fastest base: 1.000 ms a call
constexpr int kWinnerBase = 23;    // 1.40 ms, within the 1.5x margin; one of its variants is the winner
constexpr int kHiddenBase = 24;    // 1.80 ms, over the margin; one of its variants is faster than the winner
constexpr int kHeuristicBase = 0;  // the heuristic's choice (c0) is this base, 1.90 ms: over the margin

// The list as an exhaustive one orders it: the bases c0..c39, then each base's variants, base by base.
int base_of(int k) { return k < kBases ? k : (k - kBases) / kVariants; }
int variant_of(int k) { return k < kBases ? -1 : (k - kBases) % kVariants; }
int index_of(int base, int variant) { return kBases + base * kVariants + variant; }
const int kWinner = index_of(kWinnerBase, 5);
const int kHidden = index_of(kHiddenBase, 7);

nlohmann::json attrs(int k) {
  const int v = variant_of(k);
  return {{"ALGO_ID", base_of(k)}, {"TILE_ID", 20}, {"STAGES_ID", 8}, {"SPLITK_NUM", 1},
          {"CLUSTER_SHAPE_ID", v < 0 ? 0 : 1 + v % 3}, {"CUSTOM_OPTION", v < 0 ? 0 : v / 3}, {"CTA_SWIZZLING", v < 0 ? 0 : v % 2}};
}

// Each base's time a call; every other base spread within the margin (1.05-1.45) or over it (1.6-3.0).
double base_cost(int b) {
  if (b == kFastBase) return 1.0;
  if (b == kWinnerBase) return 1.40;
  if (b == kHiddenBase) return 1.80;
  if (b == kHeuristicBase) return 1.90;
  return b % 3 == 0 ? 1.6 + 1.4 * ((b * 37) % 100) / 100.0 : 1.05 + 0.4 * ((b * 53) % 100) / 100.0;
}
bool far(int b) { return base_cost(b) > 1.5; }

std::vector<double> costs() {
  std::vector<double> c(kCandidates);
  for (int k = 0; k < kCandidates; ++k) {
    const int v = variant_of(k);
    // Variants within a few percent of their base (the fastest base's all slower than it).
    const double spread = v < 0 ? 0 : (base_of(k) == kFastBase ? 0.01 + 0.003 * v : -0.02 + 0.005 * v);
    c[static_cast<std::size_t>(k)] = base_cost(base_of(k)) * (1 + spread);
  }
  c[static_cast<std::size_t>(kWinner)] = 0.90;
  c[static_cast<std::size_t>(kHidden)] = 0.85;
  return c;
}

// An exhaustive tune of `strategy` on a small problem: the heuristic's top-1 (c0), then the whole list.
TuneOptions options(double margin, const std::string& strategy = "head_batched") {
  TuneOptions opt;
  opt.problems = {make_problem(1, 2, 32, 16, 1, 0, KvLayout::contiguous, DType::fp16, false)};
  opt.strategies = strategy;
  opt.measure = quick_measure();
  opt.screen = screening_settings(quick_measure(), 3);
  opt.exhaustive = true;
  opt.top = 1;
  opt.group_margin = margin;
  opt.quiet = true;
  return opt;
}

struct Tuned {
  TuneOutcome out;
  std::int64_t calls = 0;
  long flushes = 0;
};

Tuned tune(const TuneOptions& opt, int stalled = -1) {
  auto cpu = make_cpu_backend();
  SpreadLt lt(*cpu, costs(), attrs);
  if (stalled >= 0) lt.stall_first_call(stalled, 50.0);  // 50 ms on one call: its probe far over the margin
  Tuned t{tune_grid(lt, opt), 0, 0};
  t.calls = lt.calls;
  t.flushes = lt.clock().flushes();
  return t;
}

int winner_of(const GemmTuneRecord& r) {
  return r.best >= 0 ? std::stoi(r.candidates[static_cast<std::size_t>(r.best)].label.substr(1)) : -1;
}

const ScreenStage* stage_of(const GemmTuneRecord& r, const std::string& kind) {
  for (const ScreenStage& s : r.stages)
    if (s.kind == kind) return &s;
  return nullptr;
}

std::int64_t probes_taken(const GemmTuneRecord& r) {
  std::int64_t n = 0;
  for (const ScreenStage& s : r.stages)
    if (s.kind == "group" || s.kind == "probe") n += s.calls_spent / std::max(s.calls, 1);
  return n;
}

// Every stage after the first takes the candidates the one before kept.
void expect_chained(const GemmTuneRecord& r) {
  ASSERT_GE(r.stages.size(), 3u);
  for (std::size_t k = 1; k < r.stages.size(); ++k) EXPECT_EQ(r.stages[k].entered, r.stages[k - 1].kept) << k;
  for (const ScreenStage& s : r.stages) {
    EXPECT_LE(s.passed, s.entered) << s.kind;
    EXPECT_LE(s.kept, s.passed) << s.kind;
  }
}

}  // namespace

TEST(GroupProbe, AWinnerWhoseBaseIsWithinTheMarginIsFoundAndFarBasesAreNotProbed) {
  Tuned t = tune(options(1.5));
  ASSERT_EQ(t.out.gemm.size(), 2u);
  int far_bases = 0;
  for (int b = 0; b < kBases; ++b) far_bases += far(b);
  for (const GemmTuneRecord& r : t.out.gemm) {
    ASSERT_EQ(r.candidates.size(), static_cast<std::size_t>(kCandidates));
    EXPECT_EQ(r.heuristic_top, 1);
    EXPECT_EQ(winner_of(r), kWinner) << screen_stages_label(r.stages);
    const CandidateOutcome& w = r.candidates[static_cast<std::size_t>(kWinner)];
    EXPECT_EQ(w.status, "ok");
    EXPECT_EQ(w.dropped_at, 0);
    EXPECT_TRUE(w.finalist);
    for (int k = 0; k < kCandidates; ++k) {
      const CandidateOutcome& c = r.candidates[static_cast<std::size_t>(k)];
      const int b = base_of(k);
      if (variant_of(k) < 0 || !far(b)) {
        EXPECT_GT(c.probe_ms, 0) << c.label << ": a base, or a variant of a base within the margin, is probed";
        continue;
      }
      EXPECT_EQ(c.probe_ms, 0) << c.label << " of a far base was probed";
      EXPECT_EQ(c.status, "cut") << c.label;
      EXPECT_GT(c.dropped_at, 0) << c.label;
      EXPECT_FALSE(c.finalist) << c.label;
    }
    // The heuristic's choice heads a far base: probed, kept, re-measured, its variants not probed.
    const CandidateOutcome& h = r.candidates[0];
    EXPECT_TRUE(h.baseline);
    EXPECT_EQ(h.status, "ok");
    EXPECT_EQ(h.dropped_at, 0);
    EXPECT_TRUE(h.finalist);
    EXPECT_GT(r.gain(), 1.2) << "the winner against the heuristic's choice, in a forward of both shapes";
    // The stages: the group stage probed the 40 bases; the far bases' variants were never probed, and of the far
    // bases only the heuristic's choice goes on.
    expect_chained(r);
    const ScreenStage* group = stage_of(r, "group");
    ASSERT_NE(group, nullptr);
    EXPECT_EQ(r.stages.front().kind, "group");
    EXPECT_EQ(group->entered, static_cast<std::size_t>(kCandidates));
    // 40 representatives, and a second probe of each far base before its group is dropped.
    EXPECT_EQ(group->calls_spent / group->calls, kBases + far_bases);
    EXPECT_EQ(group->kept, static_cast<std::size_t>(kCandidates - far_bases * (1 + kVariants) + 1));
    EXPECT_EQ(probes_taken(r), kCandidates - far_bases * kVariants + far_bases);
    EXPECT_EQ(r.stages[1].kind, "probe");
  }
}

TEST(GroupProbe, WithoutGroupingEveryCandidateIsProbedAndAFarBasesFastVariantWins) {
  // The margin's bet, shown: a variant 2.1x faster than its base is found only by probing every candidate.
  Tuned on = tune(options(1.5));
  Tuned off = tune(options(0));
  ASSERT_EQ(off.out.gemm.size(), 2u);
  for (std::size_t s = 0; s < 2; ++s) {
    const GemmTuneRecord& r = off.out.gemm[s];
    EXPECT_EQ(winner_of(r), kHidden);
    EXPECT_EQ(stage_of(r, "group"), nullptr);
    EXPECT_EQ(r.stages.front().kind, "probe");
    EXPECT_EQ(probes_taken(r), kCandidates);
    EXPECT_LT(probes_taken(on.out.gemm[s]), probes_taken(r));
  }
  EXPECT_LT(on.calls, off.calls) << "grouped " << on.calls << " GEMM calls, every candidate probed " << off.calls;
}

TEST(GroupProbe, AStallInTheProbeOfTheWinnersBaseDoesNotDropItsGroup) {
  // The winner's base is probed first through a 50 ms host stall: one sample far over the margin. Its second
  // probe, taken before the group is dropped, is within it: the variants are probed and the winner found.
  Tuned t = tune(options(1.5), kWinnerBase);
  ASSERT_EQ(t.out.gemm.size(), 2u);
  for (const GemmTuneRecord& r : t.out.gemm) {
    EXPECT_EQ(winner_of(r), kWinner) << screen_stages_label(r.stages);
    const CandidateOutcome& base = r.candidates[static_cast<std::size_t>(kWinnerBase)];
    EXPECT_GT(base.probe_ms, 0);
    EXPECT_LT(base.probe_ms, 10.0) << "the faster of its two probes";
    EXPECT_GT(r.candidates[static_cast<std::size_t>(index_of(kWinnerBase, 0))].probe_ms, 0) << "its variants probed";
  }
  // The stall cost one probe more than the far bases' retakes.
  Tuned clean = tune(options(1.5));
  for (std::size_t s = 0; s < 2; ++s)
    EXPECT_EQ(probes_taken(t.out.gemm[s]), probes_taken(clean.out.gemm[s]) + 1);
}

TEST(GroupProbe, AMarginBelowTheWinnersBaseLosesTheWinner) {
  // 1.3: the winner's base (1.40x the fastest) is dropped with its variants; the fastest base's group wins.
  Tuned t = tune(options(1.3));
  for (const GemmTuneRecord& r : t.out.gemm) {
    const int w = winner_of(r);
    ASSERT_GE(w, 0);
    EXPECT_EQ(base_of(w), kFastBase) << r.candidates[static_cast<std::size_t>(w)].label;
    EXPECT_EQ(r.candidates[static_cast<std::size_t>(kWinner)].probe_ms, 0);
    EXPECT_GT(r.candidates[static_cast<std::size_t>(kWinner)].dropped_at, 0);
  }
}

TEST(GroupProbe, AProbeOfFewerCallsRunsWithoutAFlushUnlessAsked) {
  // nested: 2 calls of each shape a forward, a probe of 1. Its probes only rank: no L2 flush before them, but
  // for --probe_flush; everything else (screen samples, finalists) flushes either way, and the tune's choices
  // are the same (the virtual clock does not model L2).
  TuneOptions opt = options(1.5, "nested");
  opt.probe_calls = 1;
  Tuned warm = tune(opt);
  opt.probe_flush = true;
  Tuned flushed = tune(opt);
  ASSERT_EQ(warm.out.gemm.size(), 2u);
  std::int64_t probes = 0;
  for (std::size_t s = 0; s < 2; ++s) {
    const GemmTuneRecord& r = warm.out.gemm[s];
    EXPECT_EQ(r.probe_calls, 1);
    EXPECT_EQ(r.screen_calls, 2);
    EXPECT_EQ(winner_of(r), kWinner);
    EXPECT_EQ(winner_of(flushed.out.gemm[s]), kWinner);
    EXPECT_EQ(r.stages.front().kind, "group");
    EXPECT_EQ(r.stages.front().calls, 1);
    probes += probes_taken(r);
    EXPECT_EQ(probes_taken(r), probes_taken(flushed.out.gemm[s]));
  }
  EXPECT_GT(warm.flushes, 0);
  EXPECT_EQ(flushed.flushes - warm.flushes, probes);
  for (const GemmCacheEntry& e : warm.out.cache.gemm_entries()) EXPECT_EQ(e.measured_with.at("probe_l2"), "warm");
  for (const GemmCacheEntry& e : flushed.out.cache.gemm_entries()) EXPECT_EQ(e.measured_with.at("probe_l2"), "flushed");
  // A batched strategy's probe is its screen's first sample: flushed.
  for (const GemmCacheEntry& e : tune(options(1.5)).out.cache.gemm_entries())
    EXPECT_EQ(e.measured_with.at("probe_l2"), "flushed");
}

TEST(GroupProbe, OnlyAnExhaustiveHalvingSearchGroups) {
  // The heuristic's top-N (here all 400) are few in practice and all re-measured: probed one by one.
  TuneOptions heuristic = options(1.5);
  heuristic.exhaustive = false;
  heuristic.top = kCandidates;
  for (const GemmTuneRecord& r : tune(heuristic).out.gemm) {
    EXPECT_EQ(r.stages.front().kind, "probe");
    EXPECT_EQ(probes_taken(r), kCandidates);
  }
  // Without halving the screen runs in one pass, as before: every candidate probed.
  TuneOptions one_pass = options(1.5);
  one_pass.halving.keep = 0;
  for (const GemmTuneRecord& r : tune(one_pass).out.gemm) {
    EXPECT_EQ(r.stages.front().kind, "probe");
    EXPECT_EQ(probes_taken(r), kCandidates);
    EXPECT_EQ(winner_of(r), kHidden);
  }
}

TEST(GroupProbe, TheCacheAndTheSummaryRecordTheGroupStage) {
  Tuned t = tune(options(1.5));
  ASSERT_EQ(t.out.cache.gemm_entries().size(), 2u);
  for (const GemmCacheEntry& e : t.out.cache.gemm_entries()) {
    const nlohmann::json& m = e.measured_with;
    EXPECT_EQ(m.at("grouping"), (nlohmann::json{{"margin", 1.5}}));
    ASSERT_TRUE(m.at("stages").is_array());
    EXPECT_EQ(m.at("stages").front().at("kind"), "group");
    EXPECT_EQ(m.at("stages").front().at("entered"), kCandidates);
    EXPECT_EQ(m.at("stages")[1].at("kind"), "probe");
  }
  const std::string text = format_tune_summary(t.out);
  EXPECT_NE(text.find("groups (1 call) 400 -> 54 probes of representatives -> "), std::string::npos) << text;
  EXPECT_NE(text.find("a screen without grouping or halving takes"), std::string::npos) << text;
  nlohmann::json summary = nlohmann::json::parse(render_tune_summary(t.out, "json"));
  for (const nlohmann::json& row : summary.at("rows")) {
    if (row.at("kind") != "gemm") continue;
    EXPECT_EQ(row.at("stages").front().at("kind"), "group");
    EXPECT_EQ(row.at("stages").front().at("entered"), kCandidates);
  }
  const std::string csv = render_tune_summary(t.out, "csv");
  EXPECT_NE(csv.find(",400>"), std::string::npos) << csv;
  // Off: the cache says so, and the stages begin with the probe.
  for (const GemmCacheEntry& e : tune(options(0)).out.cache.gemm_entries()) {
    EXPECT_TRUE(e.measured_with.at("grouping").is_null());
    EXPECT_EQ(e.measured_with.at("stages").front().at("kind"), "probe");
  }
  // On, with nothing to group (candidates that are no cuBLASLt configurations, each a group of its own): no
  // group stage ran, and the cache does not claim one.
  auto cpu = make_cpu_backend();
  SpreadLt plain(*cpu, costs());
  const TuneOutcome ungrouped = tune_grid(plain, options(1.5));
  ASSERT_EQ(ungrouped.cache.gemm_entries().size(), 2u);
  for (const GemmCacheEntry& e : ungrouped.cache.gemm_entries()) {
    EXPECT_TRUE(e.measured_with.at("grouping").is_null()) << e.measured_with.dump();
    EXPECT_EQ(e.measured_with.at("stages").front().at("kind"), "probe");
  }
}

TEST(GroupProbe, ADryRunCountsTheBaseGroups) {
  // What the group stage would probe first, before anything is timed: 40 bases a shape.
  TuneOptions opt = options(1.5);
  opt.dry_run = true;
  const std::string text = format_tune_summary(tune(opt).out);
  EXPECT_NE(text.find("800 candidates over 2 GEMM shapes; 80 base groups"), std::string::npos) << text;
}

// The split tune's screening units (orchestrate/tune_units.hpp): deterministic, every candidate of a split shape in
// exactly one unit, sizes within one of each other, small shapes and shapes of earlier problems left out;
// the compact outcome form (successive halving's dropped stage and the screen's stages included) round-trips;
// the split tune hands a finishing unit out ahead of the queued screens.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/json_document.hpp"
#include "orchestrate/tune_split.hpp"
#include "orchestrate/tune_units.hpp"

using namespace ab;

namespace {

std::vector<ListedShape> random_shapes(std::mt19937& rng, int n) {
  std::uniform_int_distribution<std::size_t> count(1, 20000);
  std::vector<ListedShape> shapes;
  for (int i = 0; i < n; ++i) shapes.push_back({"shape" + std::to_string(i), i % 2 ? "nested" : "ptr_array", count(rng)});
  return shapes;
}

}  // namespace

TEST(TuneUnits, EveryCandidateOfASplitShapeIsInExactlyOneUnit) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<ListedShape> shapes = random_shapes(rng, 1 + trial % 6);
    const std::size_t split = std::uniform_int_distribution<std::size_t>(1, 5000)(rng);
    std::set<std::string> taken;
    std::vector<ScreenUnit> units = plan_screen_units(3, shapes, split, taken);
    std::map<std::string, std::vector<int>> seen;
    std::map<std::string, std::vector<std::size_t>> sizes;
    for (const ScreenUnit& u : units) {
      EXPECT_EQ(u.problem, 3u);
      ASSERT_LT(u.lo, u.hi);
      EXPECT_LE(u.hi - u.lo, split);
      auto& hits = seen[u.key];
      hits.resize(u.count);
      for (std::size_t i = u.lo; i < u.hi; ++i) hits[i]++;
      sizes[u.key].push_back(u.hi - u.lo);
    }
    for (const ListedShape& s : shapes) {
      EXPECT_TRUE(taken.count(s.key));
      if (s.count <= split) {
        EXPECT_FALSE(seen.count(s.key)) << s.key << " has " << s.count << " candidates, split " << split;
        continue;
      }
      ASSERT_TRUE(seen.count(s.key));
      for (std::size_t i = 0; i < s.count; ++i) ASSERT_EQ(seen[s.key][i], 1) << s.key << " candidate " << i;
      auto [lo, hi] = std::minmax_element(sizes[s.key].begin(), sizes[s.key].end());
      EXPECT_LE(*hi - *lo, 1u);
      EXPECT_EQ(sizes[s.key].size(), (s.count + split - 1) / split);
    }
    std::set<std::string> taken_again;
    std::vector<ScreenUnit> again = plan_screen_units(3, shapes, split, taken_again);
    ASSERT_EQ(again.size(), units.size());
    for (std::size_t i = 0; i < units.size(); ++i)
      EXPECT_TRUE(again[i].key == units[i].key && again[i].lo == units[i].lo && again[i].hi == units[i].hi &&
                  again[i].strategy == units[i].strategy);
  }
}

TEST(TuneUnits, AShapeAnEarlierProblemMakesIsNotScreenedAgain) {
  std::set<std::string> taken;
  std::vector<ScreenUnit> first = plan_screen_units(0, {{"qk", "nested", 7}, {"pv", "nested", 5}}, 3, taken);
  EXPECT_EQ(first.size(), 5u);  // 7 -> 3 units (2, 2, 3), 5 -> 2 units (2, 3)
  std::vector<ScreenUnit> second = plan_screen_units(1, {{"pv", "nested", 5}, {"other", "head_batched", 4}}, 3, taken);
  ASSERT_EQ(second.size(), 2u);
  for (const ScreenUnit& u : second) EXPECT_EQ(u.key, "other");
  EXPECT_EQ(second[0].lo, 0u);
  EXPECT_EQ(second[1].hi, 4u);
  // A one-candidate list and a split of 1: one unit per candidate would be over the split only when larger.
  std::set<std::string> none;
  EXPECT_TRUE(plan_screen_units(0, {{"one", "nested", 1}}, 1, none).empty());
  EXPECT_EQ(plan_screen_units(0, {{"two", "nested", 2}}, 1, none).size(), 2u);
}

TEST(TuneUnits, ScreenedRangesRoundTrip) {
  std::mt19937 rng(5);
  std::vector<CandidateOutcome> c(37);
  for (std::size_t i = 0; i < c.size(); ++i) {
    c[i].status = i % 5 == 0 ? "incorrect" : (i % 7 == 0 ? "failed" : "ok");
    c[i].reason = c[i].status == "ok" ? "" : "reason " + std::to_string(i);
    c[i].screen_ms = std::uniform_real_distribution<double>(0.01, 3)(rng);
    c[i].screen_samples = 1 + static_cast<int>(i % 3);
    c[i].dropped_at = static_cast<int>(i % 4);  // successive halving's stage that dropped it, 0 for none
  }
  ScreenedShape shape;
  screened_range_from_json(screened_range_to_json(c, 0, 11), 0, c.size(), shape);
  screened_range_from_json(screened_range_to_json(c, 11, 37), 11, c.size(), shape);
  shape.verify_s = 1.5;
  shape.stages = {{"probe", 4, 1, 37, 20, 5, 148}, {"halving", 32, 1, 5, 5, 2, 160}, {"final", 32, 3, 2, 2, 2, 192}};
  ScreenedShape back = screened_shape_from_json(screened_shape_to_json(shape));
  ASSERT_EQ(back.candidates.size(), c.size());
  EXPECT_EQ(back.verify_s, 1.5);
  ASSERT_EQ(back.stages.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(back.stages[k].to_json(), shape.stages[k].to_json()) << k;
  for (std::size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(back.candidates[i].status, c[i].status);
    EXPECT_EQ(back.candidates[i].reason, c[i].reason);
    EXPECT_EQ(back.candidates[i].screen_ms, c[i].screen_ms);
    EXPECT_EQ(back.candidates[i].screen_samples, c[i].screen_samples);
    EXPECT_EQ(back.candidates[i].dropped_at, c[i].dropped_at);
  }
  // A range not yet returned stays empty (status ""): the finishing unit records it as not screened.
  ScreenedShape part;
  screened_range_from_json(screened_range_to_json(c, 5, 9), 5, c.size(), part);
  EXPECT_EQ(part.candidates[4].status, "");
  EXPECT_EQ(part.candidates[5].status, c[5].status);
  EXPECT_EQ(part.candidates[9].status, "");
}

// The split tune's order (orchestrate/tune_split.hpp): screening units queue behind what is queued, and a
// strategy's finishing unit goes ahead of them once its own screens are in, so that a long finish (nested's
// re-measured finalists) overlaps the other strategies' screens instead of ending the tune on one device.
TEST(SplitTuneOrder, AFinishingUnitGoesAheadOfTheQueuedScreens) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("attnbench-split-order-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  TuneOptions opt;
  opt.problems.resize(1);
  opt.strategies = "nested,ptr_array";
  SplitTune split(opt, /*split=*/3, dir.string());
  ASSERT_EQ(split.listing_units(), 2u);
  EXPECT_TRUE(split.ready().first.empty() && split.ready().last.empty()) << "nothing before the listings";
  // Each strategy lists one shape of 6 candidates (two screening units of 3).
  auto listing = [&](std::size_t item, const char* strategy, const char* key) {
    const std::string file = (dir / ("listing-" + std::to_string(item) + ".json")).string();
    write_json_atomic(file, {{"schema", "attnbench.tune-part/1"},
                             {"shapes", {{{"key", key}, {"strategy", strategy}, {"count", 6}}}}});
    EXPECT_TRUE(split.absorb(TaskOutcome{item, 0, 0, file, ""}));
  };
  listing(0, "nested", "shape-n");
  listing(1, "ptr_array", "shape-p");
  ReadyItems planned = split.ready();
  ASSERT_EQ(planned.last.size(), 4u) << "two screening units per shape, queued at the back";
  EXPECT_TRUE(planned.first.empty()) << "no strategy's screens are in yet";
  // nested's two screening units end (lost: their candidates are recorded as not screened): its finishing
  // unit comes as `first`, while ptr_array's screens are still queued.
  for (std::size_t i = 0; i < 2; ++i) split.absorb(TaskOutcome{planned.last[i], 0, 0, "", "test: lost"});
  ReadyItems next = split.ready();
  ASSERT_EQ(next.first.size(), 1u) << "nested's finishing unit";
  EXPECT_TRUE(next.last.empty());
  EXPECT_EQ(split.problem_of(next.first[0]), 0u);
  EXPECT_EQ(split.finishing_units(0), 2u);
  const nlohmann::json unit =
      read_json_document((dir / ("unit-" + std::to_string(next.first[0]) + ".json")).string(), "attnbench.tune-unit/1");
  EXPECT_EQ(unit.at("kind"), "finishing");
  EXPECT_EQ(unit.at("strategy"), "nested") << "the strategy whose screens are in, not ptr_array";
  EXPECT_TRUE(split.ready().first.empty()) << "released once";
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

// The pool's shared probe bounds (orchestrate/tune_units.hpp): the fastest per shape and device name; a slower
// report, a zero or a NaN changes nothing; another device name has its own.
TEST(TuneUnits, ProbeBoundsKeepTheFastestPerShapeAndDeviceName) {
  nlohmann::json b = nlohmann::json::object();
  EXPECT_EQ(probe_bound_of(b, "k", "H200"), 0.0);
  EXPECT_TRUE(add_probe_bound(b, "k", "H200", 0.5));
  EXPECT_FALSE(add_probe_bound(b, "k", "H200", 0.7)) << "slower";
  EXPECT_FALSE(add_probe_bound(b, "k", "H200", 0.0));
  EXPECT_FALSE(add_probe_bound(b, "k", "H200", std::nan("")));
  EXPECT_EQ(probe_bound_of(b, "k", "H200"), 0.5);
  EXPECT_TRUE(add_probe_bound(b, "k", "H200", 0.4));
  EXPECT_EQ(probe_bound_of(b, "k", "H200"), 0.4);
  EXPECT_EQ(probe_bound_of(b, "k", "H100"), 0.0) << "a device of another name does not compare";
  EXPECT_TRUE(add_probe_bound(b, "k", "H100", 0.9));
  EXPECT_EQ(probe_bound_of(b, "k", "H200"), 0.4);
  EXPECT_EQ(probe_bound_of(b, "other", "H200"), 0.0);
}

// A screening unit's reported fastest probe reaches the pool's probe-bounds.json (what the next units read), only
// where it is faster than what the file holds.
TEST(SplitTuneOrder, ScreeningUnitsShareTheirFastestProbe) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("attnbench-split-bounds-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  TuneOptions opt;
  opt.problems.resize(1);
  opt.strategies = "nested";
  SplitTune split(opt, /*split=*/3, dir.string());
  const std::string listing = (dir / "listing.json").string();
  write_json_atomic(listing, {{"schema", "attnbench.tune-part/1"},
                              {"shapes", {{{"key", "shape-n"}, {"strategy", "nested"}, {"count", 6}}}}});
  ASSERT_TRUE(split.absorb(TaskOutcome{0, 0, 0, listing, ""}));
  ReadyItems planned = split.ready();
  ASSERT_EQ(planned.last.size(), 2u);
  auto screened = [&](std::size_t n, double best_ms) {
    std::vector<CandidateOutcome> c(6);
    for (auto& x : c) x.status = "cut";
    const std::string file = (dir / ("screen-" + std::to_string(n) + ".json")).string();
    write_json_atomic(file, {{"schema", "attnbench.tune-part/1"}, {"range", screened_range_to_json(c, 3 * n, 3 * n + 3)},
                             {"verify_s", 0.0}, {"screen_s", 0.0}, {"stages", nlohmann::json::array()},
                             {"best_probe_ms", best_ms}, {"device_name", "NVIDIA H200"}});
    EXPECT_TRUE(split.absorb(TaskOutcome{planned.last[n], 0, 0, file, ""}));
    return read_json_document((dir / "probe-bounds.json").string(), "attnbench.tune-probe-bounds/1");
  };
  EXPECT_EQ(probe_bound_of(screened(0, 0.25).at("bounds"), "shape-n", "NVIDIA H200"), 0.25);
  EXPECT_EQ(probe_bound_of(screened(1, 0.5).at("bounds"), "shape-n", "NVIDIA H200"), 0.25) << "slower: unchanged";
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

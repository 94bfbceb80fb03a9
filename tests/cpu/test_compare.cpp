// Unit tests of the compare logic on documents built here in the documented attnbench.report/1 schema:
// the verdict rule at its edges, status ranking, lone rows, device checks, regression decision.
#include "report/compare.hpp"

#include <cmath>

#include "core/errors.hpp"
#include "testing.hpp"

using nlohmann::json;
using namespace ab;

// The documents built here go through the one typed reader, as `attnbench compare` reads its files.
static CompareResult compare_reports(const json& base, const json& next, const CompareOptions& o) {
  return ab::compare_reports(report_from_json(base, "'base'"), report_from_json(next, "'new'"), o);
}

static json problem(int seq_len, bool causal = false) {
  return {{"batch", 2},          {"heads", 4},         {"seq_len", seq_len}, {"head_dim", 64},
          {"pages", 1},          {"page_size", seq_len}, {"pages_requested", 1}, {"kv_layout", "contiguous"},
          {"dtype", "fp16"},     {"causal", causal}};
}

static json row(int seq_len, const std::string& strategy, double median, double noise, const std::string& status = "ok") {
  json r = {{"problem", problem(seq_len)}, {"strategy", strategy}, {"status", status}, {"reason", ""}};
  if (status == "ok") r["time_ms"] = {{"median", median}, {"mean", median}, {"noise", noise}, {"samples", 50}};
  else r["reason"] = "because";
  return r;
}

// rows as a vector: a one-row `json rows = {row}` is that row under clang and a one-element array under
// gcc (CWG 1467), which made every one-row case fail when built with clang.
static json report(const std::string& device, std::vector<json> rows) {
  return {{"schema", "attnbench.report/1"},
          {"tool", {{"name", "attnbench"}, {"version", "0.1.0"}, {"git", "abc"}}},
          {"device", {{"backend", "cuda"}, {"name", device}}},
          {"settings", {{"hot", false}, {"timer", "events"}}},
          {"results", rows}};
}

// Every timed row of `doc` as measured in `count` rounds (no rounds.error, so the verdict still uses the
// within-run noise): with two or more rounds on both sides the threshold-and-noise rule alone decides.
static json with_rounds(json doc, int count) {
  for (json& r : doc["results"])
    if (r.contains("time_ms")) r["rounds"] = {{"count", count}};
  return doc;
}

static Verdict verdict(double base, double next, double na, double nb, double threshold = 0.05, double k = 2) {
  CompareOptions o;
  o.threshold = threshold;
  o.noise_k = k;
  return timing_verdict(base, next, na, nb, o);
}

TEST(Compare, verdict_rule_edges) {
  EXPECT_TRUE(verdict(1.0, 1.04, 0.001, 0.001) == Verdict::same);       // within threshold, certain: still same
  EXPECT_TRUE(verdict(1.0, 1.01, 0.02, 0.02) == Verdict::ambiguous);    // within threshold, but the band (5.7%) is not
  EXPECT_TRUE(verdict(1.0, 1.00, INFINITY, 0.0) == Verdict::ambiguous); // unknown uncertainty: never "same"
  EXPECT_TRUE(verdict(1.0, 1.025, 0.005, 0.005, kDefaultThreshold) == Verdict::same);  // the default threshold: 3%
  EXPECT_TRUE(verdict(1.0, 1.035, 0.005, 0.005, kDefaultThreshold) == Verdict::slower);
  EXPECT_NEAR(CompareOptions{}.threshold, 0.03, 1e-15);
  EXPECT_TRUE(verdict(1.0, 1.10, 0.001, 0.001) == Verdict::slower);     // beyond both
  EXPECT_TRUE(verdict(1.0, 0.90, 0.001, 0.001) == Verdict::faster);
  EXPECT_TRUE(verdict(1.0, 1.10, 0.04, 0.04) == Verdict::ambiguous);    // 10% < 2*sqrt(2)*4% = 11.3%
  EXPECT_TRUE(verdict(1.0, 1.12, 0.04, 0.04) == Verdict::slower);       // 12% > 11.3%
  EXPECT_TRUE(verdict(1.0, 0.85, 0.10, 0.00) == Verdict::ambiguous);    // -15% inside 2*10%
  EXPECT_TRUE(verdict(1.0, 1.03, 0.0, 0.0, 0.02) == Verdict::slower);   // --threshold=2%
  EXPECT_TRUE(verdict(1.0, 1.10, NAN, NAN) == Verdict::slower);         // missing noise counts as 0
  EXPECT_TRUE(verdict(1.0, 1.10, 0.04, 0.04, 0.05, 1.0) == Verdict::slower);  // k=1: 10% > 5.7%
  double change = 0, noise = 0, limit = 0;
  CompareOptions o;
  timing_verdict(2.0, 2.5, 0.03, 0.04, o, &change, &noise, &limit);
  EXPECT_NEAR(change, 0.25, 1e-12);
  EXPECT_NEAR(noise, 0.05, 1e-12);
  EXPECT_NEAR(limit, 0.10, 1e-12);
}

TEST(Compare, status_ranks) {
  EXPECT_TRUE(status_rank("ok") > status_rank("unsupported"));
  EXPECT_TRUE(status_rank("unsupported") > status_rank("incorrect"));
  EXPECT_EQ(status_rank("incorrect"), status_rank("failed"));
}

TEST(Compare, matches_rows_and_decides) {
  json base = report("H200", {row(512, "fused", 1.0, 0.005), row(512, "nested", 5.0, 0.005), row(1024, "fused", 2.0, 0.005),
                              row(1024, "nested", 9.0, 0.005, "failed"), row(2048, "fused", 3.0, 0.005)});
  json next = report("H200", {row(1024, "fused", 2.01, 0.005), row(512, "nested", 5.0, 0.005), row(512, "fused", 1.3, 0.005),
                              row(1024, "nested", 8.0, 0.005), row(4096, "fused", 4.0, 0.005)});
  next["results"][0]["problem"]["pages_requested"] = 0;  // spelled as page_size: still the same problem
  CompareResult c = compare_reports(with_rounds(base, 20), with_rounds(next, 20), CompareOptions{});
  ASSERT_TRUE(c.rows.size() == 4u);
  EXPECT_EQ(c.rows[0].strategy, std::string("fused"));
  EXPECT_TRUE(c.rows[0].verdict == Verdict::slower);  // 512 fused +30%
  EXPECT_TRUE(c.rows[1].verdict == Verdict::same);
  EXPECT_TRUE(c.rows[2].verdict == Verdict::same);    // 1024 fused +0.5%
  EXPECT_TRUE(c.rows[3].verdict == Verdict::better);  // failed -> ok
  ASSERT_TRUE(c.missing.size() == 1u);
  EXPECT_EQ(c.missing[0].label, std::string("B=2 H=4 S=2048 D=64 P=1 contiguous fp16"));
  ASSERT_TRUE(c.added.size() == 1u);
  EXPECT_EQ(c.added[0].problem.seq_len, 4096);
  EXPECT_TRUE(c.regressed());
  EXPECT_EQ(c.exit_code(), 1);
  json j = compare_to_json(c);
  EXPECT_EQ(j["counts"]["slower"].get<int>(), 1);
  EXPECT_EQ(j["counts"]["missing"].get<int>(), 1);
  EXPECT_EQ(j["exit_code"].get<int>(), 1);
}

TEST(Compare, status_worse_is_a_regression_without_any_time) {
  json base = report("H200", {row(512, "fused", 1.0, 0.01)});
  json next = report("H200", {row(512, "fused", 0, 0, "incorrect")});
  CompareResult c = compare_reports(base, next, CompareOptions{});
  ASSERT_TRUE(c.rows.size() == 1u);
  EXPECT_TRUE(c.rows[0].verdict == Verdict::worse);
  EXPECT_EQ(c.exit_code(), 1);
  std::string text = render_compare(c, "console");
  EXPECT_TRUE(text.find("ok -> incorrect") != std::string::npos);
  EXPECT_TRUE(text.find("REGRESSION") != std::string::npos);
  // ok -> unsupported is a coverage regression too; incorrect -> failed is a change, not worse.
  next["results"][0]["status"] = "unsupported";
  EXPECT_EQ(compare_reports(base, next, CompareOptions{}).exit_code(), 1);
  json b2 = report("H200", {row(512, "fused", 0, 0, "incorrect")});
  json n2 = report("H200", {row(512, "fused", 0, 0, "failed")});
  CompareResult c2 = compare_reports(b2, n2, CompareOptions{});
  EXPECT_TRUE(c2.rows[0].verdict == Verdict::changed);
  EXPECT_EQ(c2.exit_code(), 0);
}

TEST(Compare, noise_never_fails_the_gate) {
  json base = report("H200", {row(512, "fused", 1.0, 0.3)});
  json next = report("H200", {row(512, "fused", 1.5, 0.3)});
  CompareResult c = compare_reports(base, next, CompareOptions{});
  EXPECT_TRUE(c.rows[0].verdict == Verdict::ambiguous);
  EXPECT_EQ(c.exit_code(), 0);
}

TEST(Compare, too_few_samples_is_never_slower) {
  json base = report("H200", {row(512, "fused", 1.0, 0.0), row(512, "nested", 1.0, 0.0)});
  json next = report("H200", {row(512, "fused", 1.5, 0.0), row(512, "nested", 1.02, 0.0)});
  base["results"][0]["time_ms"]["samples"] = 1;  // one sample: stdev 0 says nothing
  next["results"][1]["time_ms"]["samples"] = 2;
  CompareResult c = compare_reports(base, next, CompareOptions{});
  EXPECT_TRUE(c.rows[0].verdict == Verdict::ambiguous);
  EXPECT_TRUE(c.rows[1].verdict == Verdict::ambiguous);  // +2%, but two samples cannot say it is within the threshold
  EXPECT_EQ(c.exit_code(), 0);
  EXPECT_TRUE(render_compare(c, "console").find("n<3") != std::string::npos);
  base["results"][0]["time_ms"]["samples"] = 3;
  EXPECT_TRUE(compare_reports(with_rounds(base, 2), with_rounds(next, 2), CompareOptions{}).rows[0].verdict == Verdict::slower);
}

TEST(Compare, rounds_spread_sets_the_uncertainty) {
  // 10% within-run noise alone makes +4% ambiguous; 20 rounds whose center is known to 0.5% make it certain:
  // band 2 * sqrt(2) * 0.5% = 1.4%.
  json base = report("H200", {row(512, "fused", 1.0, 0.10)});
  json next = report("H200", {row(512, "fused", 1.04, 0.10)});
  EXPECT_TRUE(compare_reports(base, next, CompareOptions{}).rows[0].verdict == Verdict::ambiguous);
  for (json* r : {&base, &next}) (*r)["results"][0]["rounds"] = {{"count", 20}, {"spread", 0.02}, {"error", 0.005}};
  CompareResult c = compare_reports(base, next, CompareOptions{});
  EXPECT_TRUE(c.rows[0].verdict == Verdict::slower);
  EXPECT_NEAR(c.rows[0].next.uncertainty, 0.005, 1e-12);
  EXPECT_NEAR(c.rows[0].noise, 0.005 * std::sqrt(2.0), 1e-12);
  // Three rounds say little about their spread: the within-run noise rules again.
  for (json* r : {&base, &next}) (*r)["results"][0]["rounds"]["count"] = 3;
  EXPECT_TRUE(compare_reports(base, next, CompareOptions{}).rows[0].verdict == Verdict::ambiguous);
}

TEST(Compare, noise_target_and_clocks_are_flagged) {
  json base = report("H200", {row(512, "fused", 1.0, 0.004), row(512, "nested", 2.0, 0.004)});
  json next = base;
  for (json* r : {&base, &next})
    for (json& x : (*r)["results"]) x["sm_clock_mhz"] = 1980;
  base["results"][0]["noise_met"] = true;
  next["results"][0]["noise_met"] = false;
  CompareResult c = compare_reports(base, next, CompareOptions{});
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_TRUE(render_compare(c, "console").find("~") != std::string::npos);  // the noise cell says it
  EXPECT_TRUE(render_compare(c, "csv").find(",true,false,") != std::string::npos);  // base met, new did not
  for (json& x : next["results"]) x["sm_clock_mhz"] = 1410;
  next["results"][1]["clock_low"] = true;
  CompareResult low = compare_reports(base, next, CompareOptions{});
  ASSERT_TRUE(low.warnings.size() == 2u);
  EXPECT_TRUE(low.warnings[0].find("SM clocks differ: the baseline ran at 1980 MHz and the new run at 1410 MHz") == 0);
  EXPECT_TRUE(low.warnings[1].find("1 row(s) ran with the SM clock below 80%") == 0);
}

TEST(Compare, missing_rows_fail_only_when_asked) {
  json base = report("H200", {row(512, "fused", 1.0, 0.01), row(512, "nested", 2.0, 0.01)});
  json next = report("H200", {row(512, "fused", 1.0, 0.01)});
  CompareOptions o;
  EXPECT_EQ(compare_reports(base, next, o).exit_code(), 0);
  o.fail_on_missing = true;
  EXPECT_EQ(compare_reports(base, next, o).exit_code(), 1);
}

TEST(Compare, device_mismatch_is_unusable_unless_ignored) {
  json base = report("NVIDIA H200", {row(512, "fused", 1.0, 0.01)});
  json next = report("NVIDIA H100 80GB HBM3", {row(512, "fused", 1.0, 0.01)});
  EXPECT_ANY_THROW(compare_reports(base, next, CompareOptions{}));
  CompareOptions o;
  o.ignore_device = true;
  CompareResult c = compare_reports(base, next, o);
  EXPECT_EQ(c.exit_code(), 0);
  EXPECT_TRUE(!c.warnings.empty());
  json cpu = report("NVIDIA H200", {row(512, "fused", 1.0, 0.01)});
  cpu["device"]["backend"] = "cpu";
  EXPECT_ANY_THROW(compare_reports(base, cpu, CompareOptions{}));
}

TEST(Compare, no_results_is_unusable) {
  json base = report("H200", {row(512, "fused", 1.0, 0.01)});
  json next = base;
  next.erase("results");
  bool usage = false;
  try {
    compare_reports(base, next, CompareOptions{});
  } catch (const UsageError&) {
    usage = true;
  }
  EXPECT_TRUE(usage);
}

TEST(Compare, duplicate_rows_warn_and_keep_the_first) {
  json base = report("H200", {row(512, "fused", 1.0, 0.005), row(512, "fused", 9.0, 0.005)});
  json next = report("H200", {row(512, "fused", 1.0, 0.005)});
  CompareResult c = compare_reports(base, next, CompareOptions{});
  ASSERT_TRUE(c.rows.size() == 1u);
  EXPECT_TRUE(c.rows[0].verdict == Verdict::same);
  EXPECT_TRUE(!c.warnings.empty());
}

TEST(Compare, renders_every_format) {
  json base = report("H200", {row(512, "fused", 1.0, 0.01), row(512, "peer:torch-flash", 1.2, 0.01)});
  json next = report("H200", {row(512, "fused", 1.2, 0.01), row(1024, "fused", 1.2, 0.01)});
  CompareResult c = compare_reports(with_rounds(base, 20), with_rounds(next, 20), CompareOptions{});
  std::string md = render_compare(c, "md");
  EXPECT_TRUE(md.find("| problem | strategy |") != std::string::npos);
  EXPECT_TRUE(md.find("**slower**") != std::string::npos);
  std::string csv = render_compare(c, "csv");
  EXPECT_TRUE(csv.find(",slower,") != std::string::npos);
  EXPECT_TRUE(csv.find(",missing,") != std::string::npos);
  EXPECT_TRUE(csv.find(",new,") != std::string::npos);
  json j = json::parse(render_compare(c, "json"));
  EXPECT_EQ(j["schema"].get<std::string>(), std::string("attnbench.compare/1"));
  EXPECT_EQ(j["rows"].size(), 1u);
  EXPECT_ANY_THROW(render_compare(c, "html"));
}


// Issue 49: one round cannot tell a change from the between-process spread (nested's two speeds on an H200
// are up to 1.41x apart), so a one-round row is slower/faster only beyond kOneRoundAllowance (1.5x).
TEST(Compare, one_round_reports_are_ambiguous_within_the_between_process_allowance) {
  EXPECT_NEAR(kOneRoundAllowance, 1.5, 1e-15);
  json base = report("H200", {row(512, "fused", 1.0, 0.005), row(512, "nested", 1.0, 0.005), row(512, "ptr_array", 1.0, 0.005),
                              row(512, "head_batched", 1.0, 0.005), row(512, "fully_batched", 1.0, 0.005)});
  json next = report("H200", {row(512, "fused", 1.2, 0.005), row(512, "nested", 2.0, 0.005), row(512, "ptr_array", 0.8, 0.005),
                              row(512, "head_batched", 0.4, 0.005), row(512, "fully_batched", 1.01, 0.005)});
  CompareResult c = compare_reports(base, next, CompareOptions{});
  ASSERT_EQ(c.rows.size(), 5u);
  EXPECT_TRUE(c.rows[0].verdict == Verdict::ambiguous);  // +20%: within what a second process can give
  EXPECT_EQ(c.rows[0].verdict_reason, "one round: between-process spread unknown; rerun with --rounds>=4");
  EXPECT_NEAR(c.rows[0].limit, 0.5, 1e-12);              // what |change| must exceed upwards at 1.5x
  EXPECT_TRUE(c.rows[1].verdict == Verdict::slower);     // 2x: beyond the allowance
  EXPECT_TRUE(c.rows[1].verdict_reason.empty());
  EXPECT_TRUE(c.rows[2].verdict == Verdict::ambiguous);  // -20% is not faster either
  EXPECT_NEAR(c.rows[2].limit, 1.0 / 3, 1e-12);          // downwards: 1 - 1/1.5
  EXPECT_TRUE(c.rows[3].verdict == Verdict::faster);     // 2.5x faster
  EXPECT_TRUE(c.rows[4].verdict == Verdict::same);       // +1%: same stays same
  EXPECT_TRUE(c.rows[4].verdict_reason.empty());
  EXPECT_EQ(c.one_round_ambiguous(), 2);
  EXPECT_EQ(c.exit_code(), 1);  // the 2x row
  // Without the 2x row no row fails: one-round ambiguity never makes a regression.
  json calm = next;
  calm["results"][1]["time_ms"]["median"] = 1.3;
  CompareResult q = compare_reports(base, calm, CompareOptions{});
  EXPECT_TRUE(q.rows[1].verdict == Verdict::ambiguous);
  EXPECT_FALSE(q.regressed());
  EXPECT_EQ(q.exit_code(), 0);

  // The reason in every format.
  std::string console = render_compare(q, "console");
  EXPECT_TRUE(console.find("ambiguous*") != std::string::npos);
  EXPECT_TRUE(console.find("* one round: between-process spread unknown; rerun with --rounds>=4") != std::string::npos);
  EXPECT_TRUE(console.find("3 ambiguous (3 of one round)") != std::string::npos);
  EXPECT_TRUE(console.find("no regression (exit 0)") != std::string::npos);
  std::string md = render_compare(q, "md");
  EXPECT_TRUE(md.find("ambiguous\\*") != std::string::npos || md.find("ambiguous*") != std::string::npos);
  EXPECT_TRUE(md.find("one round: between-process spread unknown") != std::string::npos);
  std::string csv = render_compare(q, "csv");
  EXPECT_TRUE(csv.substr(0, csv.find('\n')).find(",verdict,reason,verdict_reason") != std::string::npos);
  EXPECT_TRUE(csv.find(",ambiguous,,one round: between-process spread unknown; rerun with --rounds>=4\n") != std::string::npos);
  json j = compare_to_json(q);
  EXPECT_EQ(j["rows"][0]["verdict"].get<std::string>(), "ambiguous");
  EXPECT_EQ(j["rows"][0]["verdict_reason"].get<std::string>(), one_round_note());
  EXPECT_FALSE(j["rows"][4].contains("verdict_reason"));
  EXPECT_EQ(j["counts"]["ambiguous_one_round"].get<int>(), 3);
  EXPECT_NEAR(j["one_round_allowance"].get<double>(), 1.5, 1e-15);
  EXPECT_EQ(j["exit_code"].get<int>(), 0);

  // One round on either side is enough for the rule; two or more on both sides keep the old rule exactly.
  CompareResult mixed = compare_reports(with_rounds(base, 20), next, CompareOptions{});
  EXPECT_TRUE(mixed.rows[0].verdict == Verdict::ambiguous);
  CompareResult mixed2 = compare_reports(base, with_rounds(next, 20), CompareOptions{});
  EXPECT_TRUE(mixed2.rows[0].verdict == Verdict::ambiguous);
  CompareResult multi = compare_reports(with_rounds(base, 2), with_rounds(next, 2), CompareOptions{});
  EXPECT_TRUE(multi.rows[0].verdict == Verdict::slower);
  EXPECT_TRUE(multi.rows[2].verdict == Verdict::faster);
  EXPECT_TRUE(multi.rows[0].verdict_reason.empty());
  EXPECT_NEAR(multi.rows[0].limit, std::max(0.03, 2 * std::sqrt(2.0) * 0.005), 1e-12);
  EXPECT_EQ(render_compare(multi, "console").find("between-process spread unknown"), std::string::npos);
  // The allowance off (1 or less): the rule before issue 49.
  CompareOptions off;
  off.one_round_allowance = 0;
  CompareResult old = compare_reports(base, next, off);
  EXPECT_TRUE(old.rows[0].verdict == Verdict::slower);
  EXPECT_TRUE(old.rows[2].verdict == Verdict::faster);
}

// The rule on its own, at its edges: 1.5x itself is not beyond the allowance.
TEST(Compare, one_round_verdict_edges) {
  CompareOptions o;
  EXPECT_TRUE(one_round_verdict(Verdict::slower, 1.0, 1.5, 1, 1, o) == Verdict::ambiguous);
  EXPECT_TRUE(one_round_verdict(Verdict::slower, 1.0, 1.51, 1, 1, o) == Verdict::slower);
  EXPECT_TRUE(one_round_verdict(Verdict::faster, 1.5, 1.0, 1, 20, o) == Verdict::ambiguous);
  EXPECT_TRUE(one_round_verdict(Verdict::faster, 1.51, 1.0, 20, 1, o) == Verdict::faster);
  EXPECT_TRUE(one_round_verdict(Verdict::slower, 1.0, 1.2, 2, 3, o) == Verdict::slower);  // rounds on both sides
  EXPECT_TRUE(one_round_verdict(Verdict::same, 1.0, 1.01, 1, 1, o) == Verdict::same);
  EXPECT_TRUE(one_round_verdict(Verdict::ambiguous, 1.0, 2.0, 1, 1, o) == Verdict::ambiguous);
  double limit = 0.03;
  one_round_verdict(Verdict::slower, 1.0, 1.2, 2, 2, o, &limit);
  EXPECT_NEAR(limit, 0.03, 1e-15);  // untouched with rounds on both sides
}

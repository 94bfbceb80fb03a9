// Typed result rows and the shared facts: Disposition names, a row's JSON (field names as the report has
// them) and its round trip, algorithm blob hex, the UTC timestamp, the problem's JSON, key and CSV cells,
// and the text table renderer.
#include <cmath>

#include "core/blob_hex.hpp"
#include "core/errors.hpp"
#include "core/problem_axes.hpp"
#include "core/text_table.hpp"
#include "core/utc_timestamp.hpp"
#include "run/launch_summary.hpp"
#include "run/result_row.hpp"
#include "testing.hpp"

using namespace ab;
using nlohmann::json;

namespace {

ResultRow timed_row() {
  ResultRow r;
  r.problem = make_problem(2, 4, 128, 64, 2, 0, KvLayout::paged, DType::bf16, true);
  r.strategy = "nested";
  r.disposition = Disposition::ok;
  r.launches.expected_gemm = 16;
  r.launches.expected_kernels = 9;
  r.launches.formula = "2·B·H·P gemm + B·H·P + 1 kernels";
  r.launches.measured = MeasuredLaunches{25, 16, 9, {"gemm x16"}, "cpu-counter"};
  r.launches.match = true;
  StrategyConfig chosen;
  chosen.score_dtype = DType::fp32;
  chosen.gathered_pages = true;
  GemmPlanChoice plan;
  plan.shape = "m128 n128 k64";
  plan.algo = "algo 6 tile 20";
  plan.source = "tuned";
  plan.attrs = json{{"ALGO_ID", 6}, {"SPLITK_NUM", 1}};
  plan.workspace_bytes = 1024;
  plan.note = "a note";
  r.config = RowConfig{chosen, {plan}, "tuned"};
  r.verify = RowVerification{"cpu-fp64", 1e-3, NAN, 2e-2, 0, true};
  r.injected_slowdown = InjectedSlowdown{0.05, 0.01, 0.2, 0.051};
  RowTiming t;
  t.time_ms = Stats{0.5, 0.51, 0.49, 0.6, 0.01, 0.02, 30};
  t.host_ms = Stats{0.1, 0.1, 0.1, 0.1, 0, 0, 30};
  t.timer = "events";
  t.stop_reason = "noise";
  t.noise_met = true;
  t.sm_clock_mhz = 1980;
  t.rounds = RoundsSummary{4, {0.5, 0.52, 0.51, 0.53}, 0.02, 1, NAN};
  r.timing = t;
  r.tflops = 12.5;
  r.gbps = 300;
  return r;
}

}  // namespace

TEST(Disposition, NamesRoundTrip) {
  for (Disposition d : {Disposition::ok, Disposition::unsupported, Disposition::incorrect, Disposition::failed})
    EXPECT_EQ(disposition_from_string(to_string(d)), d);
  EXPECT_STREQ(to_string(Disposition::incorrect), "incorrect");
  EXPECT_FALSE(disposition_from_string("OK").has_value());
  EXPECT_TRUE(is_error(Disposition::failed));
  EXPECT_FALSE(is_error(Disposition::unsupported));
}

TEST(ResultRow, JsonHasTheReportFieldNames) {
  json j = to_json(timed_row());
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["reason"], "");
  EXPECT_EQ(j["problem"]["kv_layout"], "paged");
  EXPECT_EQ(j["problem"]["pages_requested"], 2);
  EXPECT_EQ(j["launches"]["expected"]["total"], 25);
  EXPECT_EQ(j["launches"]["measured"]["source"], "cpu-counter");
  EXPECT_TRUE(j["launches"]["match"].get<bool>());
  EXPECT_FALSE(j["launches"].contains("explained"));
  EXPECT_TRUE(j["verify"]["rel_l2_err"].is_null());
  EXPECT_EQ(j["time_ms"]["median"], 0.5);
  EXPECT_EQ(j["rounds"]["count"], 4);
  EXPECT_EQ(j["rounds"]["error"].dump(), "null");  // NaN: written as null
  EXPECT_EQ(j["injected_slowdown"]["fraction"], 0.05);
  EXPECT_EQ(j["tflops"], 12.5);
  EXPECT_FALSE(j.contains("samples_ms"));
}

TEST(ResultRow, UntimedRowHasNoTimingFields) {
  ResultRow r;
  r.problem = make_problem(1, 1, 8, 16, 1, 0, KvLayout::contiguous, DType::fp16, false);
  r.strategy = "fused";
  r.disposition = Disposition::unsupported;
  r.reason = "head_dim 16 has no tile";
  json j = to_json(r);
  EXPECT_EQ(j["status"], "unsupported");
  EXPECT_FALSE(j.contains("time_ms"));
  EXPECT_FALSE(j.contains("tflops"));
  EXPECT_FALSE(j.contains("config"));
  EXPECT_FALSE(j["launches"].contains("measured"));
  EXPECT_EQ(to_json(result_row_from_json(j, "test")), j);
}

TEST(ResultRow, RoundTripsThroughJson) {
  json j = to_json(timed_row());
  ResultRow back = result_row_from_json(j, "test");
  EXPECT_EQ(back.disposition, Disposition::ok);
  EXPECT_TRUE(back.problem == timed_row().problem);
  EXPECT_TRUE(std::isnan(back.verify->rel_l2_err));
  EXPECT_TRUE(std::isnan(back.timing->rounds->error));
  EXPECT_EQ(to_json(back).dump(), j.dump());  // dump: NaN != NaN in memory, null in text
}

TEST(ResultRow, RefusesAnUnknownStatusWithOneLine) {
  json j = to_json(timed_row());
  j["status"] = "great";
  try {
    result_row_from_json(j, "'r.json' results[0]");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "'r.json' results[0]: status 'great' is not ok, unsupported, incorrect or failed");
  }
  j = to_json(timed_row());
  j["time_ms"]["median"] = "fast";  // a wrong type is refused; a missing field reads as absent (older reports)
  try {
    result_row_from_json(j, "'r.json'", "results[2].");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "'r.json': results[2].time_ms.median must be a number or null");
  }
}

// cuBLASLt 13 names a split GEMM's own kernel "..._splitK_..."; only the reduction kernels are extra launches.
TEST(LaunchSummary, SplitKReductionsExplainExtraKernelsButSplitGemmsDoNot) {
  LaunchContract c{16, 9, "2·B·KVH·P gemm + B·KVH·P softmax + 1 finalize"};
  LaunchRecord r;
  r.gemm_calls = 16;
  r.other_kernels = 9;
  r.kernels = 33;
  r.source = "cupti";
  r.kernel_names = {"nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_TNT x8", "ab::kernels::softmax_update_kernel x8",
                    "nvjet_sm90_hss_64x128_64x8_2x1_v_bz_splitK_NNN x8",
                    "cublasLt::splitKreduce_kernel<32, 16, int, float> x8", "ab::kernels::finalize_kernel x1"};
  RowLaunches l = summarize_launches(c, r);
  EXPECT_TRUE(l.match);
  EXPECT_NE(l.explained.find("8 extra"), std::string::npos);
  r.kernels = 34;  // one more kernel than the reductions explain
  EXPECT_FALSE(summarize_launches(c, r).match);
}

TEST(BlobHex, EncodesAndDecodes) {
  std::vector<std::uint8_t> blob = {0x00, 0x0a, 0xff, 0x7c};
  EXPECT_EQ(blob_to_hex(blob), "000aff7c");
  std::vector<std::uint8_t> back;
  ASSERT_TRUE(blob_from_hex("000AFF7c", &back));
  EXPECT_EQ(back, blob);
  EXPECT_TRUE(is_blob_hex(""));
  EXPECT_FALSE(is_blob_hex("abc"));
  EXPECT_FALSE(is_blob_hex("zz"));
  back = {1};
  EXPECT_FALSE(blob_from_hex("0g", &back));
  EXPECT_EQ(back, std::vector<std::uint8_t>{1});
}

TEST(UtcTimestamp, IsoToTheSecond) {
  EXPECT_EQ(utc_timestamp(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_timestamp(1795384200), "2026-11-22T21:50:00Z");
  EXPECT_EQ(utc_timestamp().size(), 20u);
}

TEST(ProblemAxes, JsonKeyAndCsv) {
  Problem p = make_problem(32, 12, 512, 64, 4, 0, KvLayout::paged, DType::fp16, true);
  EXPECT_EQ(problem_label(p), p.label());
  Problem back = problem_from_json(problem_to_json(p), "test");
  EXPECT_TRUE(back == p);
  EXPECT_EQ(problem_key(back), problem_key(p));
  EXPECT_EQ(problem_key(p).find("pages_requested"), std::string::npos);
  EXPECT_EQ(problem_csv_columns().size(), problem_csv_cells(p).size());
  EXPECT_EQ(problem_csv_cells(p)[9], "paged");
  EXPECT_THROW(problem_from_json(json{{"batch", "1"}}, "test"), UsageError);
}

TEST(TextTable, AlignsPadsAndRules) {
  TextTable t({{"name", Align::left, 0, true, 0}, {"ms", Align::right, 6, false, 2}, {"note", Align::left, 0, false, 1}});
  t.add_row({"nested", "1.25", "ok"});
  t.add_break();
  t.add_row({"x", "12.5"}, "reason text");
  t.add_row({"y", ""});
  EXPECT_EQ(t.render(),
            "name        ms note\n"
            "-------------------\n"
            "nested    1.25 ok\n"
            "\n"
            "x         12.5 reason text\n"
            "y\n");
  t.set_rule_extra(2);
  EXPECT_EQ(t.rule_line(), std::string(21, '-'));
}

TEST(TextTable, PadsMultiByteCellsByDisplayWidth) {
  TextTable t({{"a", Align::left, 0, true, 0}, {"noise", Align::right, 8, false, 1}});
  t.add_row({"r", "±1.2%"});
  EXPECT_EQ(t.body(), "r    ±1.2%\n");  // 5 columns shown, padded to 8 like fmt's "{:>8}"
}

TEST(ResultRow, ConfigurationIsTypedAndRoundTrips) {
  json j = to_json(timed_row());
  const json& c = j["config"];
  EXPECT_EQ(c["score_dtype"], "fp32");
  EXPECT_TRUE(c["gathered_pages"].get<bool>());
  EXPECT_FALSE(c.contains("tile"));
  EXPECT_EQ(c["source"], "tuned");
  ASSERT_EQ(c["gemm_algos"].size(), 1u);
  EXPECT_EQ(c["gemm_algos"][0]["attrs"]["ALGO_ID"], 6);
  EXPECT_EQ(c["gemm_algos"][0]["workspace_bytes"], 1024);
  ResultRow back = result_row_from_json(j, "test");
  ASSERT_TRUE(back.config.has_value());
  EXPECT_EQ(back.config->strategy.score_dtype, DType::fp32);
  EXPECT_EQ(back.config->gemm_algos[0].algo, "algo 6 tile 20");
  EXPECT_EQ(back.config->gemm_algos[0].note, "a note");
  EXPECT_EQ(to_json(back).dump(), j.dump());

  // The fused strategy's tile, as a report of it reads back; a wrong type is one clear line.
  json fused = j;
  fused["config"] = {{"tile", {{"block_m", 128}, {"block_n", 64}, {"warps", 8}, {"stages", 2}, {"name", "m128n64w8s2"}}},
                     {"tile_source", "cache"}, {"gemm_algos", json::array()}, {"source", "cache"}};
  ResultRow f = result_row_from_json(fused, "test");
  ASSERT_TRUE(f.config && f.config->strategy.tile);
  EXPECT_EQ(f.config->strategy.tile->name(), "m128n64w8s2");
  EXPECT_EQ(to_json(f)["config"], fused["config"]);
  // A decode tile (split-KV) and a GEMM row's packing and padding read back as they were written.
  json decode = fused;
  decode["config"]["tile"] = FusedTile::decode_tile(8).to_json();
  ResultRow d = result_row_from_json(decode, "'r.json'");
  ASSERT_TRUE(d.config && d.config->strategy.tile);
  EXPECT_EQ(d.config->strategy.tile->name(), "decode-s8");
  EXPECT_TRUE(*d.config->strategy.tile == FusedTile::decode_tile(8));
  EXPECT_EQ(to_json(d)["config"], decode["config"]);
  // A warp-specialized Hopper tile keeps its "ws" through the report.
  FusedTile ws_tile{128, 128, 12, 2, TileFamily::prefill_ws};
  json ws = fused;
  ws["config"]["tile"] = ws_tile.to_json();
  EXPECT_EQ(ws["config"]["tile"]["name"], "m128n128w12s2ws");
  ResultRow w = result_row_from_json(ws, "'r.json'");
  ASSERT_TRUE(w.config && w.config->strategy.tile);
  EXPECT_TRUE(*w.config->strategy.tile == ws_tile);
  EXPECT_FALSE(*w.config->strategy.tile == (FusedTile{128, 128, 12, 2}));
  EXPECT_EQ(to_json(w)["config"], ws["config"]);
  // The TMA decode kernel's 128-key, whole-row-box tile keeps both through the report.
  const FusedTile rows_tile = FusedTile::decode_tile(4, true, 128, true);
  json rb = fused;
  rb["config"]["tile"] = rows_tile.to_json();
  ResultRow rr = result_row_from_json(rb, "'r.json'");
  ASSERT_TRUE(rr.config && rr.config->strategy.tile);
  EXPECT_EQ(rr.config->strategy.tile->name(), "decode-ws-n128-rows-s4");
  EXPECT_TRUE(*rr.config->strategy.tile == rows_tile);
  EXPECT_EQ(to_json(rr)["config"], rb["config"]);
  json packed = fused;
  packed["config"] = {{"score_dtype", "fp16"}, {"gathered_pages", true}, {"gqa_packed", true},
                      {"padded_fraction", 0.25}, {"gemm_algos", json::array()}, {"source", "heuristic"}};
  ResultRow pk = result_row_from_json(packed, "'r.json'");
  ASSERT_TRUE(pk.config && pk.config->strategy.gqa_packed && pk.config->strategy.padded_fraction);
  EXPECT_TRUE(*pk.config->strategy.gqa_packed);
  EXPECT_DOUBLE_EQ(*pk.config->strategy.padded_fraction, 0.25);
  EXPECT_EQ(to_json(pk)["config"], packed["config"]);
  fused["config"]["gathered_pages"] = "yes";
  try {
    result_row_from_json(fused, "'r.json'");
    ADD_FAILURE() << "a string gathered_pages was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("config.gathered_pages must be true or false"), std::string::npos) << e.what();
  }
}

// The one fused-tile identity (core/fused_tile.hpp): every family's name parses back to the same tile, its
// JSON reads back to it through the cache's and the report's readers, earlier versions' tile objects still
// read, and malformed names and fields are refused naming the field.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/fused_default_tile.hpp"
#include "core/fused_tile.hpp"
#include "core/problem.hpp"
#include "run/result_row.hpp"
#include "tune/cache_entries.hpp"

namespace ab {
namespace {

using nlohmann::json;

std::vector<FusedTile> one_of_each() {
  return {FusedTile{64, 64, 4, 2},
          FusedTile{128, 64, 8, 2},
          FusedTile::prefill_tile(128, 128, 12, 2, TileFamily::prefill_ws),
          FusedTile::prefill_tile(192, 128, 16, 4, TileFamily::prefill_wsp),
          FusedTile::decode_tile(0),
          FusedTile::decode_tile(8),
          FusedTile::decode_tile(0, true),
          FusedTile::decode_tile(4, true, 128, true),
          FusedTile::decode_tile(16, true, 64, true)};
}

// A report row holding `tile` as its configuration, read back.
FusedTile through_report(const json& tile) {
  json row = {{"problem", {{"batch", 1}, {"heads", 1}, {"seq_len", 64}, {"head_dim", 64}, {"pages", 1},
                           {"kv_layout", "contiguous"}, {"dtype", "fp16"}, {"causal", false}}},
              {"strategy", "fused"},
              {"status", "ok"},
              {"config", {{"tile", tile}}}};
  ResultRow r = result_row_from_json(row, "'r.json'");
  return *r.config->strategy.tile;
}

TEST(FusedTile, NamesParseBackToTheSameTile) {
  for (const FusedTile& t : one_of_each()) {
    const std::optional<FusedTile> back = FusedTile::from_name(t.name());
    ASSERT_TRUE(back) << t.name();
    EXPECT_TRUE(*back == t) << t.name();
  }
  EXPECT_EQ(FusedTile::from_name("m128n128w12s2wsp")->family, TileFamily::prefill_wsp);
  EXPECT_EQ(FusedTile::from_name("m128n128w12s2ws")->family, TileFamily::prefill_ws);
  EXPECT_EQ(FusedTile::from_name("decode-ws-n128-rows-s4")->family, TileFamily::decode_ws);
}

TEST(FusedTile, MalformedNamesAreNoTiles) {
  for (const char* s : {"", "big", "m128n128w12s2wx", "m128n128w12s2wspp", "m0n64w4s2", "m64n64w4", "m064n64w4s2",
                        "decode-ws-s0", "decode-ws4", "decode-ws-n64", "decode-ws-rows-n128", "decode-ws-n0128",
                        "decode-s8-ws", "decodex"})
    EXPECT_FALSE(FusedTile::from_name(s).has_value()) << s;
}

TEST(FusedTile, FamilyDecidesTheKernelFacts) {
  EXPECT_FALSE(FusedTile{}.wgmma());
  EXPECT_TRUE((FusedTile{128, 64, 8, 2}.wgmma()));
  EXPECT_TRUE(FusedTile::prefill_tile(128, 128, 12, 2, TileFamily::prefill_wsp).persistent());
  EXPECT_TRUE(FusedTile::prefill_tile(128, 128, 12, 2, TileFamily::prefill_wsp).ws());
  EXPECT_FALSE(FusedTile::prefill_tile(128, 128, 12, 2, TileFamily::prefill_ws).persistent());
  EXPECT_TRUE(FusedTile::decode_tile(0, true).ws());
  EXPECT_TRUE(FusedTile::decode_tile(0, true).decode());
  EXPECT_FALSE(FusedTile::decode_tile(0, true).wgmma());
  EXPECT_STREQ(tile_family_name(TileFamily::prefill_wsp), "prefill-wsp");
  EXPECT_STREQ(tile_family_name(TileFamily::decode_ws), "decode-ws");
}

TEST(FusedTile, JsonRoundTripsThroughTheCacheAndTheReport) {
  for (const FusedTile& t : one_of_each()) {
    const json j = t.to_json();
    EXPECT_EQ(j.at("name"), t.name());
    EXPECT_TRUE(fused_tile_from_json(j, "cache") == t) << t.name();
    EXPECT_TRUE(through_report(j) == t) << t.name();
  }
}

// Tile objects as earlier versions wrote them: before the ws tiles (no "ws"), before the persistent ones (no
// "persistent"), before the decode variants (no "row_boxes", 64 keys), with a name the reader does not need.
TEST(FusedTile, EarlierVersionsTilesStillRead) {
  const json plain = {{"block_m", 128}, {"block_n", 64}, {"warps", 4}, {"stages", 2}, {"name", "m128n64w4s2"}};
  const json ws = {{"block_m", 128}, {"block_n", 128}, {"warps", 12}, {"stages", 2}, {"ws", true}};
  const json decode = {{"block_m", 16}, {"block_n", 64}, {"warps", 4}, {"stages", 3}, {"decode", true}, {"splits", 8}};
  const json decode_no_splits = {{"block_m", 16}, {"block_n", 64}, {"warps", 4}, {"stages", 3}, {"decode", true}};
  const std::pair<json, FusedTile> cases[] = {
      {plain, FusedTile{128, 64, 4, 2}},
      {ws, FusedTile::prefill_tile(128, 128, 12, 2, TileFamily::prefill_ws)},
      {decode, FusedTile::decode_tile(8)},
      {decode_no_splits, FusedTile::decode_tile(0)}};
  for (const auto& [j, want] : cases) {
    EXPECT_TRUE(fused_tile_from_json(j, "cache") == want) << j.dump();
    EXPECT_TRUE(through_report(j) == want) << j.dump();
    // What this version writes for it is what it read, plus the fields it always writes.
    EXPECT_EQ(want.to_json().at("name"), want.name());
  }
  // "persistent" without "ws" was never written; it reads as the plain tile, as before.
  json odd = plain;
  odd["persistent"] = true;
  EXPECT_TRUE(fused_tile_from_json(odd, "cache") == (FusedTile{128, 64, 4, 2}));
}

TEST(FusedTile, MalformedFieldsAreNamed) {
  const json good = FusedTile{128, 64, 4, 2}.to_json();
  auto cache_error = [](const json& j) {
    try {
      fused_tile_from_json(j, "c.json: fused[0].tile");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto report_error = [](const json& j) {
    try {
      through_report(j);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json missing = good;
  missing.erase("warps");
  EXPECT_EQ(cache_error(missing), "c.json: fused[0].tile: field 'warps' is missing");
  EXPECT_EQ(report_error(missing), "'r.json': config.tile.warps is missing");
  json zero = good;
  zero["block_m"] = 0;
  EXPECT_EQ(cache_error(zero), "c.json: fused[0].tile: field 'block_m' must be positive");
  json text = good;
  text["stages"] = "2";
  EXPECT_EQ(report_error(text), "'r.json': config.tile.stages must be an integer");
  json flag = good;
  flag["ws"] = 1;
  EXPECT_EQ(cache_error(flag), "c.json: fused[0].tile: field 'ws' must be true or false");
  json splits = FusedTile::decode_tile(4).to_json();
  splits["splits"] = -1;
  EXPECT_EQ(cache_error(splits), "c.json: fused[0].tile: field 'splits' must be 0 or more");
}


// The default plan's problem rule: a window of at most kNarrowWindowMax keys at head_dim 64 prefers the
// five-stage 64-key persistent tile; no window, a wider one, or another head_dim keeps the table's order.
TEST(FusedTile, NarrowWindowsAtHeadDim64PreferTheDeepRing) {
  auto problem = [](std::int64_t d, std::int64_t window) {
    ProblemSpec s;
    s.batch = 1; s.heads = 64; s.kv_heads = 8; s.seq_len = 8192; s.q_len = 8192; s.head_dim = d; s.causal = true;
    s.pages = 1;
    s.window = window;
    return make_problem(s);
  };
  const std::optional<FusedTile> t = preferred_fused_tile(problem(64, 128));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->name(), "m192n64w16s5wsp");
  EXPECT_TRUE(preferred_fused_tile(problem(64, kNarrowWindowMax)).has_value());
  EXPECT_FALSE(preferred_fused_tile(problem(64, kNarrowWindowMax + 1)).has_value());
  EXPECT_FALSE(preferred_fused_tile(problem(64, 0)).has_value());
  EXPECT_FALSE(preferred_fused_tile(problem(128, 128)).has_value());
}

// The decode rule: at head_dim 128, more packed rows per KV head than one m16 slice (q_len x GQA group) take
// the 64-key TMA tile; 16 rows or fewer, head_dim 64 or 256, or a q_len past the decode tiles keep the order.
TEST(FusedTile, ManyPackedDecodeRowsAtHeadDim128PreferThe64KeyTile) {
  auto problem = [](std::int64_t d, std::int64_t q_len, std::int64_t kv_heads) {
    ProblemSpec s;
    s.batch = 3; s.heads = 32; s.kv_heads = kv_heads; s.seq_len = 1000; s.q_len = q_len; s.head_dim = d;
    s.causal = true; s.page_size = 16; s.kv_layout = KvLayout::paged;
    return make_problem(s);
  };
  const std::optional<FusedTile> t = preferred_fused_tile(problem(128, 8, 8));  // 8 x 4 = 32 rows
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->name(), "decode-ws");
  EXPECT_TRUE(preferred_fused_tile(problem(128, 5, 8)).has_value());    // 20 rows
  EXPECT_FALSE(preferred_fused_tile(problem(128, 4, 8)).has_value());   // 16 rows: the 128-key tile
  EXPECT_TRUE(preferred_fused_tile(problem(128, 1, 1)).has_value());    // MQA: 32 rows of one token
  EXPECT_FALSE(preferred_fused_tile(problem(64, 8, 8)).has_value());   // 32 rows at 64: one chunk
  EXPECT_FALSE(preferred_fused_tile(problem(256, 8, 8)).has_value());
  EXPECT_FALSE(preferred_fused_tile(problem(128, 17, 8)).has_value());  // prefill tiles
}

// At head_dim 64, more than one 32-row chunk a KV head (MQA) takes the 128-key TMA tile; GQA's few rows do not.
TEST(FusedTile, MqaDecodeAtHeadDim64PrefersThe128KeyTile) {
  auto problem = [](std::int64_t heads, std::int64_t kv_heads, std::int64_t q_len) {
    ProblemSpec s;
    s.batch = 2; s.heads = heads; s.kv_heads = kv_heads; s.seq_len = 700; s.q_len = q_len; s.head_dim = 64;
    s.pages = 1;
    return make_problem(s);
  };
  const std::optional<FusedTile> falcon = preferred_fused_tile(problem(71, 1, 1));
  ASSERT_TRUE(falcon.has_value());
  EXPECT_EQ(falcon->name(), "decode-ws-n128");
  EXPECT_TRUE(preferred_fused_tile(problem(64, 1, 1)).has_value());
  EXPECT_FALSE(preferred_fused_tile(problem(32, 1, 1)).has_value());   // 32 rows: one chunk
  EXPECT_FALSE(preferred_fused_tile(problem(64, 8, 1)).has_value());   // gpt-oss: 8 rows
  EXPECT_TRUE(preferred_fused_tile(problem(32, 8, 9)).has_value());    // 36 rows of draft tokens
  EXPECT_FALSE(preferred_fused_tile(problem(71, 1, 17)).has_value());  // prefill tiles
}

}  // namespace
}  // namespace ab

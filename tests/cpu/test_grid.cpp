// Axis and grid parsing, problem validation and page geometry, suite loading, dtype conversions.
#include <cstdio>
#include <fstream>

#include "core/axis.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"
#include "core/problem.hpp"
#include "core/problem_axes.hpp"
#include "tune/problem_key.hpp"
#include "testing.hpp"

using namespace ab;

TEST(Grid, axis_values_lists_and_ranges) {
  EXPECT_TRUE(parse_axis("batch", "32") == std::vector<std::int64_t>({32}));
  EXPECT_TRUE(parse_axis("batch", "1,8,32") == std::vector<std::int64_t>({1, 8, 32}));
  EXPECT_TRUE(parse_axis("seq_len", "128:4096:*2") == std::vector<std::int64_t>({128, 256, 512, 1024, 2048, 4096}));
  EXPECT_TRUE(parse_axis("seq_len", "64:256:+64") == std::vector<std::int64_t>({64, 128, 192, 256}));
  EXPECT_TRUE(parse_axis("seq_len", "3:5") == std::vector<std::int64_t>({3, 4, 5}));
  EXPECT_TRUE(parse_axis("seq_len", "100:300:*2") == std::vector<std::int64_t>({100, 200}));
  EXPECT_TRUE(parse_axis("x", " 7 , 64:128:*2 ") == std::vector<std::int64_t>({7, 64, 128}));
}

TEST(Grid, axis_rejects_bad_text) {
  for (const char* bad : {"", "0", "-4", "abc", "12x", "1,,2", "8:4", "1:8:*1", "1:8:+0", "1:8:/2", "1:2:3:4",
                          ":8", "4:", "1:8:*", "1,"}) {
    bool threw = false;
    try {
      parse_axis("batch", bad);
    } catch (const UsageError& e) {
      threw = std::string(e.what()).find("--batch") != std::string::npos;
    }
    if (!threw) std::fprintf(stderr, "  not rejected: '%s'\n", bad);
    EXPECT_TRUE(threw);
  }
}

TEST(Grid, problem_page_geometry) {
  Problem p = make_problem(3, 5, 1000, 64, 7, 0, KvLayout::contiguous, DType::fp16, false);
  EXPECT_EQ(p.page_size, 143);
  EXPECT_EQ(p.pages, 7);
  EXPECT_EQ(p.last_page_len(), 1000 - 6 * 143);
  EXPECT_EQ(p.padded_seq(), 1001);
  Problem q = make_problem(1, 1, 10, 8, 6, 0, KvLayout::paged, DType::fp16, false);
  EXPECT_EQ(q.page_size, 2);
  EXPECT_EQ(q.pages, 5);  // a sixth page would be empty
  EXPECT_EQ(q.pages_requested, 6);
  Problem r = make_problem(1, 1, 100, 8, 0, 16, KvLayout::paged, DType::bf16, true);
  EXPECT_EQ(r.pages, 7);
  EXPECT_EQ(r.last_page_len(), 4);
  Problem all = make_problem(1, 1, 19, 8, 19, 0, KvLayout::paged, DType::bf16, true);
  EXPECT_EQ(all.page_size, 1);
  EXPECT_EQ(all.pages, 19);
}

TEST(Grid, problem_flops_and_bytes) {
  Problem p = make_problem(32, 12, 512, 64, 1, 0, KvLayout::contiguous, DType::fp16, false);
  EXPECT_NEAR(p.flops(), 4.0 * 32 * 12 * 512 * 512 * 64, 1);
  EXPECT_NEAR(p.bytes(), 4.0 * 32 * 12 * 512 * 64 * 2, 1);
  Problem c = make_problem(32, 12, 512, 64, 1, 0, KvLayout::contiguous, DType::fp16, true);
  // Causal counts the pairs computed: query i sees keys 0..i, S(S+1)/2 per head.
  EXPECT_NEAR(c.flops(), 4.0 * 32 * 12 * (512.0 * 513 / 2) * 64, 1);
}

TEST(Grid, problem_validation) {
  EXPECT_ANY_THROW(make_problem(0, 1, 8, 8, 1, 0, KvLayout::contiguous, DType::fp16, false));
  EXPECT_ANY_THROW(make_problem(1, -1, 8, 8, 1, 0, KvLayout::contiguous, DType::fp16, false));
  EXPECT_ANY_THROW(make_problem(1, 1, 8, 8, 9, 0, KvLayout::contiguous, DType::fp16, false));   // pages > tokens
  EXPECT_ANY_THROW(make_problem(1, 1, 8, 8, 0, 9, KvLayout::contiguous, DType::fp16, false));   // page_size > S
  EXPECT_ANY_THROW(make_problem(1, 1, 8, 8, 2, 4, KvLayout::contiguous, DType::fp16, false));   // both given
}

TEST(Grid, grid_is_the_product_of_axes) {
  GridSpec g;
  g.set("batch", "1,2").set("heads", "3").set("seq_len", "64:256:*2").set("head_dim", "64,128").set("pages", "1,2");
  g.set("dtype", "fp16,bf16").set("causal", "false,true").set("kv_layout", "contiguous,paged");
  auto ps = expand_grid(g);
  EXPECT_EQ(ps.size(), std::size_t(2 * 1 * 3 * 2 * 2 * 2 * 2 * 2));
  GridSpec bad = g;
  bad.set("dtype", "fp8");
  EXPECT_ANY_THROW(expand_grid(bad));
  bad = g;
  bad.set("kv_layout", "ring");
  EXPECT_ANY_THROW(expand_grid(bad));
}

TEST(Grid, suites_are_searched_beside_the_binary_then_the_source_tree_then_cwd) {
  const std::vector<std::string> dirs = suite_search_dirs();
  ASSERT_EQ(dirs.size(), 3u);
  // The test program's own ../share/attnbench/configs (an installed binary's layout), then the source tree.
  EXPECT_NE(dirs[0].find("share/attnbench/configs"), std::string::npos) << dirs[0];
  EXPECT_EQ(dirs[0].front(), '/') << dirs[0];
  EXPECT_EQ(dirs[1], std::string(ATTNBENCH_SOURCE_DIR) + "/configs");
  EXPECT_EQ(dirs[2], "./configs");
  EXPECT_EQ(resolve_suite_path("ci"), dirs[1] + "/ci.json");  // not installed beside this test: the source tree
  try {
    load_suite("no-such-suite-anywhere");
    ADD_FAILURE() << "a missing suite loaded";
  } catch (const UsageError& e) {
    for (const std::string& d : dirs) EXPECT_NE(std::string(e.what()).find(d), std::string::npos) << e.what();
  }
}

TEST(Grid, every_shipped_suite_loads) {
  for (const char* name : {"bert-base", "gpt2", "llama-prefill", "paged-prefill", "ci"}) {
    std::string suite;
    auto ps = load_suite(std::string(ATTNBENCH_SOURCE_DIR) + "/configs/" + name + ".json", &suite);
    EXPECT_TRUE(!ps.empty());
    EXPECT_EQ(suite, std::string(name));
  }
  auto llama = load_suite("llama-prefill");
  bool has_long = false;
  for (auto& p : llama) has_long = has_long || (p.heads == 32 && p.head_dim == 128 && p.seq_len >= 4096);
  EXPECT_TRUE(has_long);
}

TEST(Grid, suite_errors_name_the_file) {
  auto expect_error = [](const std::string& path, const char* content, const char* needle) {
    if (content) {
      std::ofstream f(path);
      f << content;
    }
    try {
      load_suite(path);
      EXPECT_TRUE(false);
    } catch (const UsageError& e) {
      std::string m = e.what();
      EXPECT_TRUE(m.find(needle) != std::string::npos);
    }
  };
  expect_error("missing_suite_file.json", nullptr, "cannot open");
  expect_error("bad_suite.json", "{ not json", "malformed JSON");
  expect_error("empty_suite.json", "{\"grids\": []}", "non-empty 'grids'");
  expect_error("typo_suite.json", "{\"grids\": [{\"batchh\": 2}]}", "unknown key 'batchh'");
  expect_error("bad_axis_suite.json", "{\"grids\": [{\"batch\": \"2:1\"}]}", "range");
}

TEST(Grid, half_and_bf16_conversions_round_to_nearest_even) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3C00);
  EXPECT_EQ(half_bits_to_float(0x3C00), 1.0f);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half_bits(1e6f), 0x7C00);                 // overflow to inf
  EXPECT_EQ(half_bits_to_float(0x0001), 5.9604644775390625e-08f);  // smallest subnormal
  EXPECT_EQ(float_to_half_bits(1.0f + 1.0f / 2048), 0x3C00);   // tie to even
  EXPECT_EQ(float_to_half_bits(1.0f + 3.0f / 2048), 0x3C02);
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(bf16_bits_to_float(0x3F80), 1.0f);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 1.0f / 256), 0x3F80);    // tie to even
  EXPECT_TRUE(half_bits_to_float(0xFFFF) != half_bits_to_float(0xFFFF));  // poison is NaN
  EXPECT_TRUE(bf16_bits_to_float(0xFFFF) != bf16_bits_to_float(0xFFFF));
  for (float f : {0.1f, -3.75f, 1234.5f, 1e-3f}) EXPECT_NEAR(half_bits_to_float(float_to_half_bits(f)), f, std::fabs(f) * 1e-3);
}


// The facts derived from the axis table, written out literally as earlier versions wrote them.
TEST(ProblemAxes, label_key_json_csv_and_cache_key_keep_their_format) {
  Problem p = make_problem(32, 12, 512, 64, 1, 0, KvLayout::contiguous, DType::fp16, false);
  EXPECT_EQ(problem_label(p), "B=32 H=12 S=512 D=64 P=1 contiguous fp16");
  EXPECT_EQ(p.label(), problem_label(p));
  Problem q = make_problem(2, 4, 100, 32, 0, 16, KvLayout::paged, DType::bf16, true);
  EXPECT_EQ(problem_label(q), "B=2 H=4 S=100 D=32 P=7 ps=16 paged bf16 causal");
  EXPECT_EQ(problem_to_json(q).dump(),
            R"({"batch":2,"causal":true,"dtype":"bf16","head_dim":32,"heads":4,"kv_heads":4,"kv_layout":"paged",)"
            R"("page_size":16,"pages":7,"pages_requested":7,"q_len":100,"seq_len":100})");
  EXPECT_EQ(problem_key(q), R"({"batch":2,"causal":true,"dtype":"bf16","head_dim":32,"heads":4,"kv_heads":4,)"
                            R"("kv_layout":"paged","page_size":16,"pages":7,"q_len":100,"seq_len":100})");
  EXPECT_EQ(problem_cache_key(p), "B32_H12_S512_D64_P1_ps512_contiguous_fp16_full");
  EXPECT_EQ(problem_cache_key(q), "B2_H4_S100_D32_P7_ps16_paged_bf16_causal");
  EXPECT_EQ(problem_cache_json(q).contains("pages_requested"), false);
  std::vector<std::string> cols = problem_csv_columns();
  std::string header;
  for (const auto& c : cols) header += c + ",";
  EXPECT_EQ(header,
            "batch,heads,kv_heads,seq_len,q_len,kv_lens,head_dim,pages,page_size,kv_layout,dtype,causal,window,softcap,sinks,"
            "head_dim_v,q_lens,kv_dtype,kv_scale,");
  EXPECT_TRUE(problem_csv_cells(q) == std::vector<std::string>({"2", "4", "4", "100", "100", "", "32", "7", "16", "paged",
                                                                 "bf16", "true", "", "", "", "", "", "", ""}));
  // Requested pages beyond the non-empty ones are kept in pages_requested, not in the key.
  Problem r = make_problem(1, 1, 10, 8, 6, 0, KvLayout::paged, DType::fp16, false);
  EXPECT_EQ(problem_to_json(r)["pages_requested"], 6);
  EXPECT_EQ(problem_label(r), "B=1 H=1 S=10 D=8 P=5 ps=2 paged fp16");
}

TEST(ProblemAxes, report_json_reads_strictly) {
  for (const Problem& p : {make_problem(2, 4, 100, 32, 0, 16, KvLayout::paged, DType::bf16, true),
                           make_problem(1, 1, 10, 8, 6, 0, KvLayout::paged, DType::fp16, false),
                           make_problem(32, 12, 512, 64, 1, 0, KvLayout::contiguous, DType::fp16, false)}) {
    Problem back = problem_from_json(problem_to_json(p), "t.json");
    EXPECT_TRUE(back == p);
    EXPECT_EQ(problem_to_json(back).dump(), problem_to_json(p).dump());
  }
  auto refused = [](nlohmann::json j, const char* needle) {
    try {
      problem_from_json(j, "r.json: results[0]");
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  };
  nlohmann::json good = problem_to_json(make_problem(2, 4, 100, 32, 0, 16, KvLayout::paged, DType::bf16, true));
  nlohmann::json j = good;
  j.erase("heads");
  refused(j, "r.json: results[0]: problem.heads is missing");
  j = good;
  j["causal"] = "yes";
  refused(j, "problem.causal must be true or false");
  j = good;
  j["dtype"] = "fp8";
  refused(j, "unknown dtype 'fp8'");
  j = good;
  j["pages"] = 3;
  refused(j, "problem.pages does not match");
  j = good;
  j["batch"] = 0;
  refused(j, "problem.batch");
}

TEST(ProblemAxes, grid_order_and_suite_keys_come_from_the_table) {
  // The product nests dtype, causal, layout, head_dim, batch, heads, seq_len, pages (outermost first).
  GridSpec g;
  g.set("batch", "1,2").set("seq_len", "16,32").set("head_dim", "8").set("heads", "1").set("causal", "false,true");
  auto ps = expand_grid(g);
  ASSERT_EQ(ps.size(), std::size_t(8));
  EXPECT_EQ(ps[0].label(), "B=1 H=1 S=16 D=8 P=1 contiguous fp16");
  EXPECT_EQ(ps[1].label(), "B=1 H=1 S=32 D=8 P=1 contiguous fp16");
  EXPECT_EQ(ps[2].label(), "B=2 H=1 S=16 D=8 P=1 contiguous fp16");
  EXPECT_EQ(ps[4].label(), "B=1 H=1 S=16 D=8 P=1 contiguous fp16 causal");
  // page_size stands in for pages.
  GridSpec paged;
  paged.set("seq_len", "64").set("page_size", "16,32").set("batch", "1").set("heads", "1").set("head_dim", "8");
  auto pp = expand_grid(paged);
  ASSERT_EQ(pp.size(), std::size_t(2));
  EXPECT_EQ(pp[0].pages, 4);
  EXPECT_EQ(pp[1].pages, 2);
  EXPECT_ANY_THROW(GridSpec().set("bogus", "1"));
  nlohmann::json suite = {{"grids", {{{"batch", {1, 2}}, {"seq_len", "16"}, {"head_dim", 8}, {"causal", true}, {"comment", "x"}}}}};
  auto sp = suite_from_json(suite, "s.json");
  ASSERT_EQ(sp.size(), std::size_t(2));
  EXPECT_EQ(sp[1].label(), "B=2 H=12 S=16 D=8 P=1 contiguous fp16 causal");
  nlohmann::json unknown = {{"grids", {{{"batch", 1}, {"sequence", 16}}}}};
  EXPECT_ANY_THROW(suite_from_json(unknown, "s.json"));
}

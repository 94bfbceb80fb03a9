// Axis and grid parsing, problem validation and page geometry, suite loading, dtype conversions.
#include <cstdio>
#include <fstream>

#include "core/axis.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"
#include "core/problem.hpp"
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
  EXPECT_NEAR(c.flops(), p.flops() / 2, 1);
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
  g.batch = "1,2";
  g.heads = "3";
  g.seq_len = "64:256:*2";
  g.head_dim = "64,128";
  g.pages = "1,2";
  g.dtype = "fp16,bf16";
  g.causal = "false,true";
  g.kv_layout = "contiguous,paged";
  auto ps = expand_grid(g);
  EXPECT_EQ(ps.size(), std::size_t(2 * 1 * 3 * 2 * 2 * 2 * 2 * 2));
  GridSpec bad = g;
  bad.dtype = "fp8";
  EXPECT_ANY_THROW(expand_grid(bad));
  bad = g;
  bad.kv_layout = "ring";
  EXPECT_ANY_THROW(expand_grid(bad));
}

TEST(Grid, every_shipped_suite_loads) {
  for (const char* name : {"bert-base", "gpt2", "llama-prefill", "paged-decode", "ci"}) {
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


// Axis and grid parsing, problem validation and page geometry, suite loading, dtype conversions.
#include <cstdio>
#include <fstream>

#include "core/axis.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"
#include "core/problem.hpp"
#include "testing.hpp"

using namespace ab;

TEST(axis_values_lists_and_ranges) {
  CHECK(parse_axis("batch", "32") == std::vector<std::int64_t>({32}));
  CHECK(parse_axis("batch", "1,8,32") == std::vector<std::int64_t>({1, 8, 32}));
  CHECK(parse_axis("seq_len", "128:4096:*2") == std::vector<std::int64_t>({128, 256, 512, 1024, 2048, 4096}));
  CHECK(parse_axis("seq_len", "64:256:+64") == std::vector<std::int64_t>({64, 128, 192, 256}));
  CHECK(parse_axis("seq_len", "3:5") == std::vector<std::int64_t>({3, 4, 5}));
  CHECK(parse_axis("seq_len", "100:300:*2") == std::vector<std::int64_t>({100, 200}));
  CHECK(parse_axis("x", " 7 , 64:128:*2 ") == std::vector<std::int64_t>({7, 64, 128}));
}

TEST(axis_rejects_bad_text) {
  for (const char* bad : {"", "0", "-4", "abc", "12x", "1,,2", "8:4", "1:8:*1", "1:8:+0", "1:8:/2", "1:2:3:4",
                          ":8", "4:", "1:8:*", "1,"}) {
    bool threw = false;
    try {
      parse_axis("batch", bad);
    } catch (const UsageError& e) {
      threw = std::string(e.what()).find("--batch") != std::string::npos;
    }
    if (!threw) std::fprintf(stderr, "  not rejected: '%s'\n", bad);
    CHECK(threw);
  }
}

TEST(problem_page_geometry) {
  Problem p = make_problem(3, 5, 1000, 64, 7, 0, KvLayout::contiguous, DType::fp16, false);
  CHECK_EQ(p.page_size, 143);
  CHECK_EQ(p.pages, 7);
  CHECK_EQ(p.last_page_len(), 1000 - 6 * 143);
  CHECK_EQ(p.padded_seq(), 1001);
  Problem q = make_problem(1, 1, 10, 8, 6, 0, KvLayout::paged, DType::fp16, false);
  CHECK_EQ(q.page_size, 2);
  CHECK_EQ(q.pages, 5);  // a sixth page would be empty
  CHECK_EQ(q.pages_requested, 6);
  Problem r = make_problem(1, 1, 100, 8, 0, 16, KvLayout::paged, DType::bf16, true);
  CHECK_EQ(r.pages, 7);
  CHECK_EQ(r.last_page_len(), 4);
  Problem all = make_problem(1, 1, 19, 8, 19, 0, KvLayout::paged, DType::bf16, true);
  CHECK_EQ(all.page_size, 1);
  CHECK_EQ(all.pages, 19);
}

TEST(problem_flops_and_bytes) {
  Problem p = make_problem(32, 12, 512, 64, 1, 0, KvLayout::contiguous, DType::fp16, false);
  CHECK_NEAR(p.flops(), 4.0 * 32 * 12 * 512 * 512 * 64, 1);
  CHECK_NEAR(p.bytes(), 4.0 * 32 * 12 * 512 * 64 * 2, 1);
  Problem c = make_problem(32, 12, 512, 64, 1, 0, KvLayout::contiguous, DType::fp16, true);
  CHECK_NEAR(c.flops(), p.flops() / 2, 1);
}

TEST(problem_validation) {
  CHECK_THROWS(make_problem(0, 1, 8, 8, 1, 0, KvLayout::contiguous, DType::fp16, false));
  CHECK_THROWS(make_problem(1, -1, 8, 8, 1, 0, KvLayout::contiguous, DType::fp16, false));
  CHECK_THROWS(make_problem(1, 1, 8, 8, 9, 0, KvLayout::contiguous, DType::fp16, false));   // pages > tokens
  CHECK_THROWS(make_problem(1, 1, 8, 8, 0, 9, KvLayout::contiguous, DType::fp16, false));   // page_size > S
  CHECK_THROWS(make_problem(1, 1, 8, 8, 2, 4, KvLayout::contiguous, DType::fp16, false));   // both given
}

TEST(grid_is_the_product_of_axes) {
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
  CHECK_EQ(ps.size(), std::size_t(2 * 1 * 3 * 2 * 2 * 2 * 2 * 2));
  GridSpec bad = g;
  bad.dtype = "fp8";
  CHECK_THROWS(expand_grid(bad));
  bad = g;
  bad.kv_layout = "ring";
  CHECK_THROWS(expand_grid(bad));
}

TEST(every_shipped_suite_loads) {
  for (const char* name : {"bert-base", "gpt2", "llama-prefill", "paged-decode", "ci"}) {
    std::string suite;
    auto ps = load_suite(std::string(ATTNBENCH_SOURCE_DIR) + "/configs/" + name + ".json", &suite);
    CHECK(!ps.empty());
    CHECK_EQ(suite, std::string(name));
  }
  auto llama = load_suite("llama-prefill");
  bool has_long = false;
  for (auto& p : llama) has_long = has_long || (p.heads == 32 && p.head_dim == 128 && p.seq_len >= 4096);
  CHECK(has_long);
}

TEST(suite_errors_name_the_file) {
  auto expect_error = [](const std::string& path, const char* content, const char* needle) {
    if (content) {
      std::ofstream f(path);
      f << content;
    }
    try {
      load_suite(path);
      CHECK(false);
    } catch (const UsageError& e) {
      std::string m = e.what();
      CHECK(m.find(needle) != std::string::npos);
    }
  };
  expect_error("missing_suite_file.json", nullptr, "cannot open");
  expect_error("bad_suite.json", "{ not json", "malformed JSON");
  expect_error("empty_suite.json", "{\"grids\": []}", "non-empty 'grids'");
  expect_error("typo_suite.json", "{\"grids\": [{\"batchh\": 2}]}", "unknown key 'batchh'");
  expect_error("bad_axis_suite.json", "{\"grids\": [{\"batch\": \"2:1\"}]}", "range");
}

TEST(half_and_bf16_conversions_round_to_nearest_even) {
  CHECK_EQ(float_to_half_bits(1.0f), 0x3C00);
  CHECK_EQ(half_bits_to_float(0x3C00), 1.0f);
  CHECK_EQ(float_to_half_bits(65504.0f), 0x7BFF);
  CHECK_EQ(float_to_half_bits(1e6f), 0x7C00);                 // overflow to inf
  CHECK_EQ(half_bits_to_float(0x0001), 5.9604644775390625e-08f);  // smallest subnormal
  CHECK_EQ(float_to_half_bits(1.0f + 1.0f / 2048), 0x3C00);   // tie to even
  CHECK_EQ(float_to_half_bits(1.0f + 3.0f / 2048), 0x3C02);
  CHECK_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  CHECK_EQ(bf16_bits_to_float(0x3F80), 1.0f);
  CHECK_EQ(float_to_bf16_bits(1.0f + 1.0f / 256), 0x3F80);    // tie to even
  CHECK(half_bits_to_float(0xFFFF) != half_bits_to_float(0xFFFF));  // poison is NaN
  CHECK(bf16_bits_to_float(0xFFFF) != bf16_bits_to_float(0xFFFF));
  for (float f : {0.1f, -3.75f, 1234.5f, 1e-3f}) CHECK_NEAR(half_bits_to_float(float_to_half_bits(f)), f, std::fabs(f) * 1e-3);
}

TEST_MAIN()

// A value head dim of its own (--head_dim_v, issue 47's MLA shape: V and O head_dim_v wide, Q and K head_dim):
// the axis's label, cache key, JSON and CSV (absent when V is as wide as K, so earlier keys and reports still
// match), bad values refused, FLOPs and bytes counted with both widths, the fp64 reference against attention
// written out by hand, every CPU strategy against the reference on awkward shapes (V narrower and wider than
// K, paged with a short last page, ragged, causal with a window, GQA packed or not, fp16 and bf16), and a
// strategy that does not declare the variant refused with it named.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"
#include "core/problem.hpp"
#include "core/problem_axes.hpp"
#include "core/reference.hpp"
#include "run/problem_inputs.hpp"
#include "strategies/registry.hpp"
#include "testing.hpp"
#include "cpu/undeclared_strategy.hpp"

using namespace ab;
using attnbench_testing::usage_error_of;

namespace {

ProblemSpec spec(std::int64_t d, std::int64_t dv) {
  ProblemSpec s;
  s.batch = 3;
  s.heads = 6;
  s.kv_heads = 2;
  s.seq_len = 45;
  s.q_len = 7;
  s.head_dim = d;
  s.head_dim_v = dv;
  s.page_size = 16;
  return s;
}

}  // namespace

TEST(ValueHeadDim, TheAxisLabelKeyJsonAndCsv) {
  const Problem split = make_problem(spec(40, 24));
  EXPECT_EQ(split.head_dim_v, 24);
  EXPECT_TRUE(split.split_head_dim());
  EXPECT_NE(split.label().find(" Dv=24"), std::string::npos) << split.label();
  const nlohmann::json j = problem_to_json(split);
  EXPECT_EQ(j.at("head_dim_v"), 24);
  EXPECT_NE(problem_cache_key_of_json(j).find("_D40_"), std::string::npos) << problem_cache_key_of_json(j);
  EXPECT_NE(problem_cache_key_of_json(j).find("_Dv24"), std::string::npos) << problem_cache_key_of_json(j);
  EXPECT_EQ(problem_from_json(j, "test"), split);
  const std::vector<std::string> columns = problem_csv_columns(), cells = problem_csv_cells(split);
  EXPECT_EQ(columns[columns.size() - 4], "head_dim_v");  // after the older axes, before q_lens (session 46) and the
                                                          // FP8 cache's (47): earlier reports' columns keep their positions
  std::size_t at = 0;
  while (at < columns.size() && columns[at] != "head_dim_v") ++at;
  ASSERT_LT(at, columns.size());
  EXPECT_EQ(cells[at], "24");
  // V as wide as K, given or not: the same problem, no field, no fragment (keys written before still match).
  const Problem same = make_problem(spec(40, 40)), plain = make_problem(spec(40, 0));
  EXPECT_EQ(same, plain);
  EXPECT_FALSE(plain.split_head_dim());
  EXPECT_FALSE(problem_to_json(plain).contains("head_dim_v"));
  EXPECT_EQ(problem_cache_key_of_json(problem_to_json(plain)).find("Dv"), std::string::npos);
  EXPECT_EQ(problem_csv_cells(plain)[at], "");
  EXPECT_EQ(problem_from_json(problem_to_json(plain), "test").head_dim_v, 40);
  EXPECT_TRUE(plain.variants().empty());
  EXPECT_EQ(split.variants(), std::vector<std::string>{kValueHeadDim});
}

TEST(ValueHeadDim, BadValuesAreRefused) {
  const ProblemAxis* axis = find_problem_axis("head_dim_v");
  ASSERT_NE(axis, nullptr);
  EXPECT_EQ(usage_error_of([&] { (void)axis->parse("0"); }), "--head_dim_v: values must be positive, got 0");
  EXPECT_EQ(usage_error_of([&] { (void)axis->parse("-8"); }), "--head_dim_v: values must be positive, got -8");
  EXPECT_THROW(axis->parse("x"), UsageError);
  EXPECT_EQ(axis->parse("512,64"), (std::vector<std::int64_t>{512, 64}));
  EXPECT_EQ(usage_error_of([&] { (void)make_problem(spec(40, -1)); }), "head_dim_v must be a positive integer, got -1");
  nlohmann::json j = problem_to_json(make_problem(spec(40, 24)));
  j["head_dim_v"] = "wide";
  EXPECT_EQ(usage_error_of([&] { (void)problem_from_json(j, "r.json"); }), "r.json: problem.head_dim_v must be a whole number");
}

TEST(ValueHeadDim, FlopsAndBytesCountBothWidths) {
  ProblemSpec s = spec(576, 512);
  s.heads = 128;
  s.kv_heads = 1;
  s.q_len = 1;
  s.seq_len = 4000;
  s.page_size = 64;
  s.kv_layout = KvLayout::paged;
  s.dtype = DType::bf16;
  const Problem p = make_problem(s);
  const double pairs = 3.0 * 128 * 4000;
  EXPECT_DOUBLE_EQ(p.pairs(), pairs);
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * pairs * (576 + 512));
  // Q (576) read and O (512) written per query head; K (576) and V (512) per KV head and token.
  EXPECT_DOUBLE_EQ(p.bytes(), (3.0 * 128 * (576 + 512) + 3.0 * 4000 * (576 + 512)) * 2);
  EXPECT_EQ(p.o_elements(), 3 * 128 * 512);
  EXPECT_EQ(p.v_pool_elements(), p.pool_slots() * 64 * 512);
  // V as wide as K: the formulas of before (4·D per pair).
  const Problem plain = make_problem(spec(40, 0));
  EXPECT_DOUBLE_EQ(plain.flops(), 4.0 * plain.pairs() * 40);
}

TEST(ValueHeadDim, TheReferenceReadsVAndWritesOAtTheirWidth) {
  // One head, D=2, Dv=3, q_len=1 against 4 keys: scores q·k_j / sqrt(2), a softmax, O = Σ p_j v_j (3 wide).
  ProblemSpec s;
  s.batch = s.heads = 1;
  s.head_dim = 2;
  s.head_dim_v = 3;
  s.seq_len = 4;
  s.q_len = 1;
  s.page_size = 4;
  const Problem p = make_problem(s);
  const double q[2] = {0.5, -0.75}, k[4][2] = {{1, 0.25}, {-0.5, 1}, {0.75, -1}, {0, 0.5}};
  const double v[4][3] = {{1, -2, 0.5}, {3, 0.25, -1}, {-0.5, 1.5, 2}, {0.125, -0.25, 4}};
  std::vector<std::uint16_t> qb, kb, vb;
  for (double x : q) qb.push_back(float_to_half_bits(static_cast<float>(x)));
  for (auto& row : k)
    for (double x : row) kb.push_back(float_to_half_bits(static_cast<float>(x)));
  for (auto& row : v)
    for (double x : row) vb.push_back(float_to_half_bits(static_cast<float>(x)));
  double out[3] = {0, 0, 0};
  reference_attention_fp64(p, qb.data(), kb.data(), vb.data(), nullptr, out);
  double w[4], den = 0;
  for (int j = 0; j < 4; ++j) den += w[j] = std::exp((q[0] * k[j][0] + q[1] * k[j][1]) / std::sqrt(2.0));
  for (int d = 0; d < 3; ++d) {
    double want = 0;
    for (int j = 0; j < 4; ++j) want += w[j] / den * v[j][d];
    EXPECT_NEAR(out[d], want, 1e-12) << d;
  }
}

TEST(ValueHeadDim, EveryCpuStrategyRunsItAgainstTheReference) {
  auto cpu = make_cpu_backend();
  int runs = 0;
  for (auto [d, dv] : {std::pair<std::int64_t, std::int64_t>{40, 24}, {24, 40}})
    for (KvLayout layout : {KvLayout::paged, KvLayout::contiguous})
      for (bool ragged : {false, true}) {
        ProblemSpec s = spec(d, dv);
        s.kv_layout = layout;
        s.dtype = ragged ? DType::bf16 : DType::fp16;
        s.causal = ragged;
        s.window = ragged ? 20 : 0;  // with a window that ends inside a page
        if (ragged) {
          s.seq_len = 0;
          s.kv_lens = {45, 9, 30};  // a short last page; one sequence shorter than the window
        }
        const Problem p = make_problem(s);
        for (const char* packing : {"on", "off"}) {
          StrategyOptions opt;
          opt.gqa_packing = std::string(packing) == "on";
          for (const auto& st : make_strategies("nested,head_batched,fully_batched,ptr_array,fused")) {
            ASSERT_EQ(st->can_run(p, *cpu, opt), "") << st->name();
            ProblemInputs in(*cpu, p, 23);
            st->setup(*cpu, p, in.io(), opt);
            EXPECT_EQ(in.check_forward([&] { st->run(*cpu); }), "")
                << st->name() << " " << p.label() << " packing " << packing;
            st->teardown(*cpu);
            ++runs;
          }
        }
      }
  EXPECT_EQ(runs, 2 * 2 * 2 * 2 * 5);
}

TEST(ValueHeadDim, AStrategyThatDoesNotDeclareItIsRefused) {
  auto cpu = make_cpu_backend();
  UndeclaredStrategy plain;
  EXPECT_EQ(plain.can_run(make_problem(spec(40, 24)), *cpu, {}), "plain does not run value head dim problems");
  EXPECT_EQ(plain.can_run(make_problem(spec(40, 40)), *cpu, {}), "");
}

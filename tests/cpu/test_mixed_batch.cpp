// Mixed batches (issue 47): per-sequence query counts (--q_lens) as a problem poses them: the pairs and bytes
// counted against a brute-force count, the key mask's rows against the problem's rule (padding rows included),
// the axis's label, cache key, JSON and CSV, bad values refused, the fp64 reference of a mixed batch against
// each sequence run alone, and every strategy on the CPU backend against it.
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/key_mask.hpp"
#include "core/problem.hpp"
#include "core/problem_axes.hpp"
#include "core/random_inputs.hpp"
#include "core/reference.hpp"
#include "run/problem_inputs.hpp"
#include "strategies/registry.hpp"
#include "cpu/brute_force_pairs.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

Problem mixed(std::vector<std::int64_t> q_lens, std::vector<std::int64_t> kv_lens, bool causal, std::int64_t window,
              KvLayout layout = KvLayout::contiguous, bool sinks = false) {
  ProblemSpec s;
  s.batch = static_cast<std::int64_t>(q_lens.size());
  s.heads = 4;
  s.kv_heads = 2;
  s.head_dim = 8;
  s.page_size = 7;
  s.kv_layout = layout;
  s.causal = causal;
  s.window = window;
  s.sinks = sinks;
  s.kv_lens = kv_lens;
  s.q_lens = q_lens;
  return make_problem(s);
}

using counting::brute_force;
using counting::Counted;

}  // namespace

TEST(MixedBatch, PairsAndBytesCountOnlyEachSequencesOwnQueries) {
  for (bool causal : {false, true})
    for (std::int64_t window : {0, 1, 6, 100}) {
      const Problem p = mixed({1, 9, 30, 4}, {40, 9, 61, 100}, causal, window);
      EXPECT_EQ(p.q_len, 30);
      EXPECT_EQ(p.total_q_len(), 44);
      const Counted c = brute_force(p);
      EXPECT_DOUBLE_EQ(p.pairs(), c.pairs) << p.label();
      const double qo = 44.0 * p.heads * (p.head_dim + p.head_dim_v) * 2;
      const double kv = static_cast<double>(p.kv_heads) * c.kv_rows * (p.head_dim + p.head_dim_v) * 2;
      EXPECT_DOUBLE_EQ(p.bytes(), qo + kv) << p.label();
    }
}

TEST(MixedBatch, TheKeyMaskOfEveryRowAgreesWithTheProblem) {
  // Packed rows (a KV head's group of query heads): row r is query r % q_len of its sequence, rows past the
  // sequence's own count padding that sees what a query past its end would.
  const Problem p = mixed({1, 5, 3}, {11, 30, 3}, true, 4);
  const std::vector<std::int32_t> kv = {11, 30, 3}, q = {1, 5, 3};
  KeyMask m;
  m.causal = true;
  m.q_len = p.q_len;
  m.kv_lens = kv.data();
  m.q_lens = q.data();
  m.items_per_seq = p.kv_heads;
  m.window = p.window;
  for (std::int64_t item = 0; item < p.batch * p.kv_heads; ++item)
    for (std::int64_t row = 0; row < p.group() * p.q_len; ++row) {
      const std::int64_t b = item / p.kv_heads, qi = row % p.q_len;
      EXPECT_EQ(key_first(m, item, row), p.first_visible_key(b, qi)) << item << " " << row;
      EXPECT_EQ(key_limit(m, item, row), p.visible_keys(b, qi)) << item << " " << row;
    }
  EXPECT_EQ(p.visible_keys(0, 0), 11);          // the decode row sees its whole sequence
  EXPECT_EQ(p.first_visible_key(0, 0), 11 - 1 - 4);
  EXPECT_EQ(p.visible_keys(1, 0), 30 - 5 + 1);  // the first of five draft tokens
  // Padding rows (the decode sequence's rows 1-4, the third's 3-4) see what the sequence's last query sees: never
  // an empty row, which a GPU softmax would turn into NaN.
  for (std::int64_t qi = 1; qi < p.q_len; ++qi) {
    EXPECT_EQ(p.visible_keys(0, qi), p.visible_keys(0, 0));
    EXPECT_EQ(p.first_visible_key(0, qi), p.first_visible_key(0, 0));
  }
  EXPECT_EQ(p.visible_keys(2, 4), 3);
  EXPECT_LT(p.first_visible_key(2, 4), p.visible_keys(2, 4));
}

TEST(MixedBatch, TheAxisLabelKeyJsonAndCsv) {
  const Problem p = mixed({1, 9, 30}, {40, 9, 61}, true, 0);
  EXPECT_NE(p.label().find(" q=30 "), std::string::npos) << p.label();
  EXPECT_NE(p.label().find("qlens=list[3]#"), std::string::npos) << p.label();
  const nlohmann::json j = problem_to_json(p);
  EXPECT_EQ(j.at("q_lens"), "list");
  EXPECT_EQ(j.at("q_lens_values"), (std::vector<std::int64_t>{1, 9, 30}));
  EXPECT_NE(problem_cache_key_of_json(j).find("_qlens#"), std::string::npos) << problem_cache_key_of_json(j);
  EXPECT_TRUE(problem_from_json(j, "test") == p);
  EXPECT_TRUE(p.variants() == (std::vector<std::string>{kQueryLengths}));
  const std::vector<std::string> cols = problem_csv_columns(), cells = problem_csv_cells(p);
  // After the axes of earlier reports (their columns keep their positions), before the FP8 cache's (session 47).
  ASSERT_GE(cols.size(), 3u);
  EXPECT_EQ(cols[cols.size() - 3], "q_lens");
  EXPECT_EQ(cells[cols.size() - 3], "list");
  // Without them nothing changes: no field, no fragment, an empty last CSV cell.
  ProblemSpec s;
  s.batch = 2; s.heads = 4; s.seq_len = 40; s.q_len = 8; s.head_dim = 8; s.pages = 1;
  const Problem plain = make_problem(s);
  const nlohmann::json jp = problem_to_json(plain);
  EXPECT_FALSE(jp.contains("q_lens"));
  EXPECT_EQ(problem_cache_key_of_json(jp).find("qlens"), std::string::npos);
  EXPECT_EQ(problem_csv_cells(plain).back(), "");
  // A spec through the axis: a seeded uniform draw, the same each time.
  const ProblemAxis* axis = find_problem_axis("q_lens");
  ASSERT_NE(axis, nullptr);
  ProblemDraft d;
  static_cast<ProblemSpec&>(d) = s;
  d.q_len = 0;
  axis->apply(d, axis->parse("uniform:1:8:3").at(0));
  const Problem drawn = d.make(), again = d.make();
  EXPECT_EQ(drawn.q_lens.size(), 2u);
  EXPECT_TRUE(drawn == again);
  EXPECT_EQ(drawn.q_lens_spec, "uniform:1:8:3");
}

TEST(MixedBatch, BadCountsAreRefused) {
  EXPECT_THROW(mixed({1, 50}, {40, 49}, true, 0), UsageError);  // more queries than KV
  EXPECT_THROW(mixed({0, 5}, {40, 49}, true, 0), UsageError);
  ProblemSpec s;
  s.batch = 3; s.heads = 4; s.seq_len = 40; s.head_dim = 8; s.pages = 1;
  s.q_lens = {1, 2};  // not one per sequence
  EXPECT_THROW(make_problem(s), UsageError);
  s.q_lens = {1, 2, 3};
  s.q_len = 2;  // not their most
  EXPECT_THROW(make_problem(s), UsageError);
  const ProblemAxis* axis = find_problem_axis("q_lens");
  ASSERT_NE(axis, nullptr);
  try {
    axis->parse("list:1,x");
    ADD_FAILURE() << "a malformed spec was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--q_lens:"), std::string::npos) << e.what();
  }
}

TEST(MixedBatch, TheReferenceOfAMixedBatchIsEachSequenceAlone) {
  // Sequence b's first q_lens[b] output rows are what a batch of that one sequence with q_len = q_lens[b] gives,
  // on the same K/V and query rows (contiguous K/V, causal, a window).
  const Problem p = mixed({1, 5, 3}, {11, 30, 7}, true, 6);
  const HostTensors t = make_random_inputs(p, 5);
  std::vector<double> out(static_cast<std::size_t>(p.o_elements()));
  reference_attention_fp64(p, t.q.data(), t.k.data(), t.v.data(), nullptr, out.data());
  const std::int64_t D = p.head_dim, S = p.seq_len, Q = p.q_len;
  for (std::int64_t b = 0; b < p.batch; ++b) {
    ProblemSpec s;
    s.batch = 1; s.heads = p.heads; s.kv_heads = p.kv_heads; s.seq_len = p.kv_len(b); s.q_len = p.q_len_of(b);
    s.head_dim = D; s.pages = 1; s.causal = true; s.window = p.window;
    const Problem one = make_problem(s);
    std::vector<std::uint16_t> q, k, v;
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < one.q_len; ++i)
        for (std::int64_t d = 0; d < D; ++d) q.push_back(t.q[static_cast<std::size_t>(((b * p.heads + h) * Q + i) * D + d)]);
    for (std::int64_t h = 0; h < p.kv_heads; ++h)
      for (std::int64_t j = 0; j < one.seq_len; ++j)
        for (std::int64_t d = 0; d < D; ++d) {
          k.push_back(t.k[static_cast<std::size_t>(((b * p.kv_heads + h) * S + j) * D + d)]);
          v.push_back(t.v[static_cast<std::size_t>(((b * p.kv_heads + h) * S + j) * D + d)]);
        }
    std::vector<double> alone(static_cast<std::size_t>(one.o_elements()));
    reference_attention_fp64(one, q.data(), k.data(), v.data(), nullptr, alone.data());
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < one.q_len; ++i)
        for (std::int64_t d = 0; d < D; ++d)
          EXPECT_DOUBLE_EQ(out[static_cast<std::size_t>(((b * p.heads + h) * Q + i) * D + d)],
                           alone[static_cast<std::size_t>((h * one.q_len + i) * D + d)])
              << "sequence " << b << " head " << h << " query " << i;
  }
}

TEST(MixedBatch, PaddingRowsAreNotCompared) {
  // What a kernel leaves in a padding row (row i >= q_lens[b] of a head) is not the problem's: NaN there passes,
  // NaN in a real row fails, and only the real rows are counted.
  const Problem p = mixed({1, 5, 3}, {11, 30, 7}, true, 0);
  const HostTensors t = make_random_inputs(p, 9);
  std::vector<double> ref(static_cast<std::size_t>(p.o_elements()));
  reference_attention_fp64(p, t.q.data(), t.k.data(), t.v.data(), nullptr, ref.data());
  std::vector<std::uint16_t> out(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) out[i] = float_to_bits(static_cast<float>(ref[i]), p.dtype);
  const std::int64_t Dv = p.head_dim_v, Q = p.q_len;
  auto at = [&](std::int64_t b, std::int64_t h, std::int64_t i) {
    return static_cast<std::size_t>(((b * p.heads + h) * Q + i) * Dv);
  };
  out[at(0, 1, 3)] = 0x7e00;  // fp16 NaN in sequence 0's padding (it has one query)
  out[at(2, 3, 4) + 2] = 0x7e00;
  ErrorStats e = compare_output(p, out.data(), ref.data());
  EXPECT_EQ(e.nonfinite, 0);
  EXPECT_LT(e.rel_l2, tolerance_for(p.dtype));
  EXPECT_EQ(e.count, (1 + 5 + 3) * p.heads * Dv);
  out[at(1, 0, 4)] = 0x7e00;  // sequence 1's fifth (real) query
  e = compare_output(p, out.data(), ref.data());
  EXPECT_EQ(e.nonfinite, 1);
}

TEST(MixedBatch, EveryStrategyOnTheCpuBackendRunsIt) {
  // Decode rows, draft tokens and a prefill chunk in one batch, paged with short last pages, a window, sinks, GQA
  // packed and not: every built-in strategy verified against the reference.
  const Problem p = mixed({1, 4, 23, 1}, {50, 9, 23, 31}, true, 10, KvLayout::paged, true);
  auto cpu = make_cpu_backend();
  for (bool packing : {true, false}) {
    StrategyOptions opt;
    opt.gqa_packing = packing;
    for (const auto& st : make_strategies("nested,head_batched,fully_batched,ptr_array,fused")) {
      ASSERT_EQ(st->can_run(p, *cpu, opt), "") << st->name();
      ProblemInputs in(*cpu, p, 13);
      st->setup(*cpu, p, in.io(), opt);
      EXPECT_EQ(in.check_forward([&] { st->run(*cpu); }), "") << st->name() << " packing " << packing;
      st->teardown(*cpu);
    }
  }
}

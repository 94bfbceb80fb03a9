// The sliding window, soft-capping and attention sinks as a problem poses them (issue 47): the keys each query
// sees (Problem's range, and KeyMask's for packed rows), the FLOPs and bytes counted from them against a
// brute-force count, the axes' label, cache key, JSON and CSV, bad values refused, the fp64 reference against
// attention written out by hand, the sinks' rows mapped to their heads and applied by the CPU primitives, and
// which strategies and backends take them (Strategy::can_run).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"
#include "core/key_mask.hpp"
#include "core/problem.hpp"
#include "core/problem_axes.hpp"
#include "core/problem_filter.hpp"
#include "core/random_inputs.hpp"
#include "core/reference.hpp"
#include "core/softmax_sinks.hpp"
#include "run/problem_inputs.hpp"
#include "strategies/registry.hpp"
#include "testing.hpp"
#include "cpu/brute_force_pairs.hpp"
#include "cpu/undeclared_strategy.hpp"

using namespace ab;

namespace {

Problem make(std::int64_t batch, std::int64_t seq, std::int64_t q_len, bool causal, std::int64_t window,
             std::int64_t softcap = 0, std::vector<std::int64_t> lens = {}) {
  ProblemSpec s;
  s.batch = batch;
  s.heads = 4;
  s.kv_heads = 2;
  s.seq_len = lens.empty() ? seq : 0;
  s.q_len = q_len;
  s.head_dim = 8;
  s.page_size = 16;
  s.causal = causal;
  s.window = window;
  s.softcap = softcap;
  s.kv_lens = lens;
  return make_problem(s);
}

using counting::brute_force;
using counting::Counted;

}  // namespace

TEST(Variants, TheKeysEachQuerySeesAndTheirCountsMatchTheRule) {
  for (bool causal : {false, true})
    for (std::int64_t window : {0, 1, 5, 16, 36, 37, 500})
      for (std::int64_t q : {1, 4, 37}) {
        const Problem p = make(2, 37, q, causal, window);
        const Counted c = brute_force(p);
        EXPECT_DOUBLE_EQ(p.pairs(), c.pairs) << p.label();
        const double qo = 2.0 * static_cast<double>(p.q_elements()) * 2;
        const double kv = 2.0 * static_cast<double>(p.kv_heads) * c.kv_rows * static_cast<double>(p.head_dim) * 2;
        EXPECT_DOUBLE_EQ(p.bytes(), qo + kv) << p.label();
        for (std::int64_t b = 0; b < p.batch; ++b)
          for (std::int64_t i = 0; i < p.q_len; ++i) {
            const std::int64_t pos = i + p.kv_len(b) - p.q_len;
            EXPECT_EQ(p.first_visible_key(b, i), window > 0 ? std::max<std::int64_t>(0, pos - window) : 0);
          }
      }
  // Ragged lengths: each sequence's own window start.
  const Problem ragged = make(3, 0, 3, true, 4, 0, {9, 37, 5});
  EXPECT_DOUBLE_EQ(ragged.pairs(), brute_force(ragged).pairs);
  EXPECT_EQ(ragged.first_visible_key(1, 2), 37 - 3 + 2 - 4);
  EXPECT_EQ(ragged.first_visible_key(2, 0), 0);
}

TEST(Variants, TheKeyMaskOfPackedRowsAgreesWithTheProblem) {
  // GQA packing: an item is a KV head's group of query heads, row r is query r % q_len.
  const Problem p = make(2, 0, 5, true, 3, 0, {11, 30});
  const std::vector<std::int32_t> lens = {11, 30};
  KeyMask m;
  m.causal = true;
  m.q_len = p.q_len;
  m.kv_lens = lens.data();
  m.items_per_seq = p.kv_heads;
  m.window = p.window;
  for (std::int64_t item = 0; item < p.batch * p.kv_heads; ++item)
    for (std::int64_t row = 0; row < p.group() * p.q_len; ++row) {
      const std::int64_t b = item / p.kv_heads, qi = row % p.q_len;
      EXPECT_EQ(key_first(m, item, row), p.first_visible_key(b, qi)) << item << " " << row;
      EXPECT_EQ(key_limit(m, item, row), p.visible_keys(b, qi)) << item << " " << row;
    }
}

TEST(Variants, TheAxesLabelKeyJsonAndCsv) {
  const Problem p = make(2, 64, 64, true, 16, 50);
  EXPECT_NE(p.label().find(" causal win=16 cap=50"), std::string::npos) << p.label();
  const nlohmann::json j = problem_to_json(p);
  EXPECT_EQ(j.at("window"), 16);
  EXPECT_EQ(j.at("softcap"), 50);
  EXPECT_NE(problem_cache_key_of_json(j).find("_causal_win16_cap50"), std::string::npos) << problem_cache_key_of_json(j);
  EXPECT_TRUE(problem_from_json(j, "test") == p);
  // Without them: no field, no fragment, empty CSV cells (reports and caches of before read as before).
  const Problem plain = make(2, 64, 64, true, 0);
  const nlohmann::json jp = problem_to_json(plain);
  EXPECT_FALSE(jp.contains("window"));
  EXPECT_FALSE(jp.contains("softcap"));
  EXPECT_EQ(problem_cache_key_of_json(jp).find("win"), std::string::npos);
  EXPECT_TRUE(problem_from_json(jp, "test") == plain);
  const std::vector<std::string> cols = problem_csv_columns(), cells = problem_csv_cells(plain), with = problem_csv_cells(p);
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (cols[c] == "window") {
      EXPECT_EQ(cells[c], "");
      EXPECT_EQ(with[c], "16");
    }
    if (cols[c] == "softcap") {
      EXPECT_EQ(with[c], "50");
    }
  }
  EXPECT_TRUE(p.variants() == (std::vector<std::string>{kSlidingWindow, kSoftCapping}));
  EXPECT_TRUE(plain.variants().empty());
}

TEST(Variants, BadValuesAreRefused) {
  EXPECT_THROW(make(1, 16, 16, false, -1), UsageError);
  EXPECT_THROW(make(1, 16, 16, false, 0, -50), UsageError);
  const ProblemAxis* window = find_problem_axis("window");
  const ProblemAxis* softcap = find_problem_axis("softcap");
  ASSERT_NE(window, nullptr);
  ASSERT_NE(softcap, nullptr);
  EXPECT_THROW(window->parse("0"), UsageError);
  EXPECT_THROW(window->parse("8,-2"), UsageError);
  EXPECT_THROW(softcap->parse("30.5"), UsageError);
  EXPECT_EQ(window->parse("128,4096"), (std::vector<std::int64_t>{128, 4096}));
  nlohmann::json j = problem_to_json(make(1, 16, 16, false, 4));
  j["window"] = 0;
  EXPECT_THROW(problem_from_json(j, "test"), UsageError);
}

TEST(Variants, TheReferenceAppliesTheWindowAndTheCap) {
  // One head, D=1, q_len=1 at the end of a sequence of 6 keys: scores q·k_j / 1 by hand, then the cap, then a
  // softmax over the window's keys only.
  ProblemSpec s;
  s.batch = s.heads = s.head_dim = 1;
  s.seq_len = 6;
  s.q_len = 1;
  s.page_size = 6;
  s.causal = true;
  const double qv = 0.75, kv[6] = {0.5, -1, 0.25, 1, -0.5, 0.875}, vv[6] = {1, 2, -3, 0.5, 4, -1};
  std::vector<std::uint16_t> q = {float_to_half_bits(static_cast<float>(qv))}, k, v;
  for (int j = 0; j < 6; ++j) {
    k.push_back(float_to_half_bits(static_cast<float>(kv[j])));
    v.push_back(float_to_half_bits(static_cast<float>(vv[j])));
  }
  for (std::int64_t window : {0, 1, 3})
    for (std::int64_t cap : {0, 1}) {
      s.window = window;
      s.softcap = cap;
      const Problem p = make_problem(s);
      double out = 0;
      reference_attention_fp64(p, q.data(), k.data(), v.data(), nullptr, &out);
      const int first = window > 0 ? 5 - static_cast<int>(window) : 0;
      double num = 0, den = 0;
      for (int j = first; j < 6; ++j) {
        double sc = qv * kv[j];
        if (cap > 0) sc = std::tanh(sc / cap) * cap;
        num += std::exp(sc) * vv[j];
        den += std::exp(sc);
      }
      EXPECT_NEAR(out, num / den, 1e-12) << "window " << window << " cap " << cap;
    }
}

TEST(Variants, StrategiesRunThemWhereTheBackendsKernelsDo) {
  auto cpu = make_cpu_backend();
  const Problem p = make(1, 32, 32, true, 8, 20);
  const std::vector<std::unique_ptr<Strategy>> built_in = make_strategies("head_batched,fully_batched,nested,fused");
  ASSERT_EQ(built_in.size(), 4u);
  for (const auto& st : built_in) EXPECT_EQ(st->can_run(p, *cpu, {}), "") << st->name();
  // A strategy that declares none (a plugin's ABI carries neither yet) is refused with the variant named.
  UndeclaredStrategy plain;
  EXPECT_EQ(plain.can_run(p, *cpu, {}), "plain does not run sliding window problems");
  EXPECT_EQ(plain.can_run(make(1, 32, 32, true, 0), *cpu, {}), "");
}

// ---- attention sinks ----------------------------------------------------------------------------------

TEST(Variants, SinksAreAnAxisCountedAndDrawnFromTheSeed) {
  ProblemSpec s;
  s.batch = 2;
  s.heads = 6;
  s.kv_heads = 2;
  s.seq_len = 40;
  s.q_len = 3;
  s.head_dim = 8;
  s.page_size = 16;
  const Problem plain = make_problem(s);
  s.sinks = true;
  const Problem p = make_problem(s);
  EXPECT_FALSE(p == plain);
  EXPECT_NE(p.label().find(" sinks"), std::string::npos) << p.label();
  EXPECT_EQ(plain.label().find("sinks"), std::string::npos);
  const nlohmann::json j = problem_to_json(p);
  EXPECT_EQ(j.at("sinks"), true);
  EXPECT_FALSE(problem_to_json(plain).contains("sinks"));
  EXPECT_NE(problem_cache_key_of_json(j).find("sinks"), std::string::npos);
  EXPECT_TRUE(problem_from_json(j, "test") == p);
  EXPECT_TRUE(p.variants() == (std::vector<std::string>{kSinks}));
  // Bytes: one fp32 logit a query head besides Q, O and K/V; FLOPs unchanged.
  EXPECT_DOUBLE_EQ(p.bytes(), plain.bytes() + 4.0 * 6);
  EXPECT_DOUBLE_EQ(p.flops(), plain.flops());
  // The grid: --sinks alone, a list of both, and words it refuses; --where on a problem without the field.
  GridSpec g;
  g.set("batch", "1").set("heads", "2").set("seq_len", "8").set("head_dim", "8").set("sinks", "true,false");
  const std::vector<Problem> grid = expand_grid(g);
  ASSERT_EQ(grid.size(), 2u);
  EXPECT_NE(grid[0].sinks, grid[1].sinks);
  EXPECT_THROW(expand_grid(GridSpec(g).set("sinks", "maybe")), UsageError);
  EXPECT_FALSE(expand_grid(GridSpec(g).set("sinks", "false")).front().sinks);
  const std::vector<Problem> both = {plain, p};
  EXPECT_EQ(filter_problems(both, {parse_problem_filter("sinks=false")}).size(), 1u);
  EXPECT_TRUE(filter_problems(both, {parse_problem_filter("sinks=false")}).front() == plain);
  EXPECT_TRUE(filter_problems(both, {parse_problem_filter("sinks!=false")}).front() == p);
  // The logits: one a head, from the seed, in [-1, 5); the other tensors are those of the problem without sinks.
  const HostTensors a = make_random_inputs(p, 7), b = make_random_inputs(p, 7), c = make_random_inputs(p, 8);
  const HostTensors none = make_random_inputs(plain, 7);
  ASSERT_EQ(a.sinks.size(), 6u);
  EXPECT_EQ(a.sinks, b.sinks);
  EXPECT_NE(a.sinks, c.sinks);
  EXPECT_TRUE(none.sinks.empty());
  EXPECT_EQ(a.q, none.q);
  EXPECT_EQ(a.k, none.k);
  for (float x : a.sinks) {
    EXPECT_GE(x, -1.0f);
    EXPECT_LT(x, 5.0f);
  }
}

TEST(Variants, TheReferenceAddsEachHeadsSinkToItsDenominator) {
  // Two heads, D=1, one query against 4 keys: out_h = sum_j e^{s_j} v_j / (sum_j e^{s_j} + e^{sink_h}).
  ProblemSpec s;
  s.batch = s.head_dim = s.q_len = 1;
  s.heads = s.kv_heads = 2;
  s.seq_len = s.page_size = 4;
  s.sinks = true;
  const Problem p = make_problem(s);
  const double qv[2] = {0.75, -0.5}, kv[2][4] = {{0.5, -1, 0.25, 1}, {1, 0.125, -0.75, 0.5}},
               vv[2][4] = {{1, 2, -3, 0.5}, {-1, 4, 0.25, 2}};
  const float sinks[2] = {2.5f, -0.75f};
  std::vector<std::uint16_t> q, k, v;
  for (int h = 0; h < 2; ++h) {
    q.push_back(float_to_half_bits(static_cast<float>(qv[h])));
    for (int j = 0; j < 4; ++j) {
      k.push_back(float_to_half_bits(static_cast<float>(kv[h][j])));
      v.push_back(float_to_half_bits(static_cast<float>(vv[h][j])));
    }
  }
  double out[2] = {0, 0};
  reference_attention_fp64(p, q.data(), k.data(), v.data(), nullptr, out, sinks);
  for (int h = 0; h < 2; ++h) {
    double num = 0, den = std::exp(static_cast<double>(sinks[h]));
    for (int j = 0; j < 4; ++j) {
      num += std::exp(qv[h] * kv[h][j]) * vv[h][j];
      den += std::exp(qv[h] * kv[h][j]);
    }
    EXPECT_NEAR(out[h], num / den, 1e-12) << "head " << h;
  }
  EXPECT_THROW(reference_attention_fp64(p, q.data(), k.data(), v.data(), nullptr, out, nullptr), std::invalid_argument);
}

TEST(Variants, EveryRowFindsItsHeadsSinkPackedOrNot) {
  // Packed GQA rows: item = (sequence, KV head), rows = group x q_len, head-major; unpacked: item = query head.
  SoftmaxSinks packed;
  packed.items_per_seq = 2;   // KV heads
  packed.heads_per_item = 3;  // the group
  packed.q_len = 4;
  EXPECT_EQ(sink_head(packed, 0, 0), 0);
  EXPECT_EQ(sink_head(packed, 0, 11), 2);
  EXPECT_EQ(sink_head(packed, 1, 4), 4);
  EXPECT_EQ(sink_head(packed, 3, 9), 5) << "sequence 1, KV head 1, its third query head";
  SoftmaxSinks plain;
  plain.items_per_seq = 6;
  plain.q_len = 4;
  EXPECT_EQ(sink_head(plain, 7, 3), 1);
  EXPECT_EQ(sink_head(plain, 11, 0), 5);
  plain.item0 = 4;  // a launch over items 4.. of all
  EXPECT_EQ(sink_head(plain, 3, 0), 1);
}

TEST(Variants, SinksChangeTheAnswerAndEveryStrategyAppliesThem) {
  // A run whose outputs left the sinks out would fail verification: the reference with sinks differs from the
  // one without by far more than the fp16 tolerance. Every built-in strategy on the CPU backend (packed GQA or
  // not, paged with a short last page, causal, q_len > 1) passes against the reference with them.
  ProblemSpec s;
  s.batch = 3;
  s.heads = 6;
  s.kv_heads = 2;
  s.seq_len = 37;
  s.q_len = 5;
  s.head_dim = 16;
  s.page_size = 8;
  s.kv_layout = KvLayout::paged;
  s.causal = true;
  s.sinks = true;
  const Problem p = make_problem(s);
  s.sinks = false;
  const Problem plain = make_problem(s);
  const HostTensors t = make_random_inputs(p, 11);
  std::vector<double> with(static_cast<std::size_t>(p.q_elements())), without(with.size());
  reference_attention_fp64(p, t.q.data(), t.k.data(), t.v.data(), t.block_table.data(), with.data(), t.sinks.data());
  reference_attention_fp64(plain, t.q.data(), t.k.data(), t.v.data(), t.block_table.data(), without.data());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < with.size(); ++i) {
    num += (with[i] - without[i]) * (with[i] - without[i]);
    den += with[i] * with[i];
  }
  EXPECT_GT(std::sqrt(num / den), 20 * tolerance_for(DType::fp16));
  auto cpu = make_cpu_backend();
  for (const char* packing : {"on", "off"}) {
    StrategyOptions opt;
    opt.gqa_packing = std::string(packing) == "on";
    for (const auto& st : make_strategies("nested,head_batched,fully_batched,ptr_array,fused")) {
      ASSERT_EQ(st->can_run(p, *cpu, opt), "") << st->name();
      ProblemInputs in(*cpu, p, 11);
      st->setup(*cpu, p, in.io(), opt);
      EXPECT_EQ(in.check_forward([&] { st->run(*cpu); }), "") << st->name() << " packing " << packing;
      st->teardown(*cpu);
    }
  }
}

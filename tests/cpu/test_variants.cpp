// The sliding window and soft-capping as a problem poses them (issue 47): the keys each query sees (Problem's
// range, and KeyMask's for packed rows), the FLOPs and bytes counted from them against a brute-force count, the
// axes' label, cache key, JSON and CSV, bad values refused, the fp64 reference against attention written out
// by hand, and which strategies and backends take them (Strategy::can_run).
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
#include "core/reference.hpp"
#include "strategies/registry.hpp"
#include "testing.hpp"

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

// The (query, key) pairs and the K/V rows some query sees, counted one query at a time from the rule itself:
// query i of a sequence of length L at position i + L - q_len sees key j when j >= position - window (a window)
// and j <= position (causal) and j < L.
struct Counted {
  double pairs = 0, kv_rows = 0;
};
Counted brute_force(const Problem& p) {
  Counted c;
  for (std::int64_t b = 0; b < p.batch; ++b) {
    const std::int64_t L = p.kv_len(b);
    std::vector<bool> seen(static_cast<std::size_t>(L), false);
    for (std::int64_t i = 0; i < p.q_len; ++i) {
      const std::int64_t pos = i + L - p.q_len;
      for (std::int64_t j = 0; j < L; ++j) {
        const bool visible = (p.window == 0 || j >= pos - p.window) && (!p.causal || j <= pos);
        if (!visible) continue;
        c.pairs += static_cast<double>(p.heads);
        seen[static_cast<std::size_t>(j)] = true;
      }
    }
    for (bool s : seen) c.kv_rows += s;
  }
  return c;
}

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
  struct Plain : Strategy {
    std::string name() const override { return "plain"; }
    std::string description() const override { return "test"; }
    LaunchContract contract(const Problem&, const StrategyOptions&) const override { return {}; }
    std::string can_implement(const Problem&, const Backend&, const StrategyOptions&) const override { return ""; }
    std::int64_t workspace_bytes(const Problem&, const StrategyOptions&) const override { return 0; }
    void setup(Backend&, const Problem&, const AttentionIO&, const StrategyOptions&) override {}
    void run(Backend&) override {}
    void teardown(Backend&) override {}
    StrategyConfig config() const override { return {}; }
  } plain;
  EXPECT_EQ(plain.can_run(p, *cpu, {}), "plain does not run sliding window problems");
  EXPECT_EQ(plain.can_run(make(1, 32, 32, true, 0), *cpu, {}), "");
}

// Every strategy on the CPU backend against the naive fp64 reference, on random data with poisoned
// outputs, over awkward shapes; and each strategy's launch contract against the calls the backend counted.
#include <cstring>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "core/dtype.hpp"
#include "core/parallel.hpp"
#include "core/problem.hpp"
#include "core/random_inputs.hpp"
#include "core/reference.hpp"
#include "core/strategy.hpp"
#include "run/problem_inputs.hpp"
#include "testing.hpp"
#include "strategies/registry.hpp"

using namespace ab;

namespace {

struct Outcome {
  double rel_l2 = 0;
  std::int64_t nonfinite = 0;
  LaunchRecord launches;
  LaunchContract contract;
};

Outcome run_one(Strategy& st, const Problem& p, const StrategyOptions& opt, std::uint64_t seed) {
  auto be = make_cpu_backend();
  HostTensors t = make_random_inputs(p, seed);
  std::size_t es = dtype_size(p.dtype);
  std::int64_t kv_extra = p.kv_layout == KvLayout::contiguous ? kv_slack_rows(p) * p.head_dim : 0;
  Buffer q(be->memory(), t.q.size() * es), k(be->memory(), (t.k.size() + kv_extra) * es), v(be->memory(), (t.v.size() + kv_extra) * es),
      o(be->memory(), p.q_elements() * es), bt(be->memory(), t.block_table.size() * 4 + 4);
  std::memcpy(q.get(), t.q.data(), t.q.size() * es);
  be->memory().fill_bytes(k.get(), 0, k.bytes());
  be->memory().fill_bytes(v.get(), 0, v.bytes());
  std::memcpy(k.get(), t.k.data(), t.k.size() * es);
  std::memcpy(v.get(), t.v.data(), t.v.size() * es);
  if (!t.block_table.empty()) std::memcpy(bt.get(), t.block_table.data(), t.block_table.size() * 4);  // never memcpy from null
  std::vector<std::int32_t> lens = kv_lens_of(p);
  AttentionIO io{q.get(), k.get(), v.get(), o.get(), bt.as<std::int32_t>(),
                 t.block_table.empty() ? nullptr : t.block_table.data(), lens.data(), lens.data()};
  std::vector<double> ref(p.q_elements());
  reference_attention_fp64(p, t.q.data(), t.k.data(), t.v.data(), t.block_table.data(), ref.data());

  Outcome out;
  out.contract = st.contract(p, opt);
  st.setup(*be, p, io, opt);
  be->memory().fill_bytes(o.get(), 0xFF, o.bytes());  // poison: any unwritten element stays NaN
  be->profiler().begin_launch_count();
  st.run(*be);
  out.launches = be->profiler().end_launch_count();
  st.teardown(*be);
  ErrorStats e = compare_output(p, o.get(), ref.data());
  out.rel_l2 = e.rel_l2;
  out.nonfinite = e.nonfinite;
  return out;
}

std::vector<Problem> awkward_problems() {
  std::vector<Problem> ps;
  auto add = [&](std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t d, std::int64_t pages, KvLayout l,
                 DType t, bool causal) { ps.push_back(make_problem(b, h, s, d, pages, 0, l, t, causal)); };
  for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
    for (bool causal : {false, true}) {
      add(2, 3, 50, 16, 7, l, DType::fp16, causal);   // 50 tokens in 7 pages of 8: short last page of 2
      add(1, 1, 33, 32, 1, l, DType::bf16, causal);   // B=1, H=1, one page
      add(1, 2, 19, 8, 19, l, DType::fp16, causal);   // pages = seq_len (page_size 1)
      add(3, 1, 40, 24, 4, l, DType::bf16, causal);   // seq_len divisible by pages
      add(1, 2, 21, 7, 3, l, DType::fp16, causal);    // odd head_dim
    }
  return ps;
}

// Inference shapes: grouped KV heads (GQA, MQA), decode and chunked prefill (q_len < KV length, causal
// bottom-right), ragged batches (lengths not a multiple of the page, a sequence of one page, one of one token
// more than a page), in both layouts and dtypes.
std::vector<Problem> inference_problems() {
  std::vector<Problem> ps;
  auto add = [&](std::int64_t b, std::int64_t h, std::int64_t kvh, std::int64_t s, std::int64_t q, std::int64_t d,
                 std::int64_t page_size, KvLayout l, DType t, bool causal, std::vector<std::int64_t> lens = {}) {
    ProblemSpec spec;
    spec.batch = b; spec.heads = h; spec.kv_heads = kvh; spec.seq_len = lens.empty() ? s : 0; spec.q_len = q;
    spec.head_dim = d; spec.page_size = page_size; spec.kv_layout = l; spec.dtype = t; spec.causal = causal;
    spec.kv_lens = lens;
    ps.push_back(make_problem(spec));
  };
  for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
    for (bool causal : {false, true}) {
      add(2, 4, 2, 45, 1, 16, 16, l, DType::fp16, causal);                 // GQA decode, short last page
      add(1, 3, 1, 30, 5, 8, 7, l, DType::bf16, causal);                   // MQA, speculative q_len 5
      add(2, 6, 2, 50, 13, 16, 16, l, DType::fp16, causal);                // GQA chunked prefill
      add(1, 1, 1, 17, 1, 8, 16, l, DType::bf16, causal);                  // B=1, H=1, q_len 1
      add(3, 4, 1, 0, 3, 16, 7, l, DType::fp16, causal, {40, 3, 17});      // ragged MQA, 1-page sequence
      add(4, 2, 2, 0, 1, 8, 16, l, DType::bf16, causal, {33, 16, 1, 70});  // ragged decode, a 1-token sequence
    }
  return ps;
}

}  // namespace

TEST(StrategiesCpu, every_strategy_runs_inference_shapes_packed_and_unpacked) {
  std::uint64_t seed = 11;
  int runs = 0;
  for (const Problem& p : inference_problems()) {
    for (auto& st : make_all_strategies()) {
      for (bool packing : {true, false}) {
        StrategyOptions opt;
        opt.gqa_packing = packing;
        auto be = make_cpu_backend();
        std::string why = st->can_implement(p, *be, opt);
        EXPECT_EQ(why, "") << st->name() << " refuses " << p.label();
        if (!why.empty()) continue;
        Outcome o = run_one(*st, p, opt, seed++);
        ++runs;
        EXPECT_EQ(o.nonfinite, 0) << st->name() << " on " << p.label();
        EXPECT_LE(o.rel_l2, tolerance_for(p.dtype)) << st->name() << " on " << p.label() << " packing " << packing;
        EXPECT_EQ(o.launches.gemm_calls, o.contract.gemm_calls) << st->name() << " on " << p.label();
        EXPECT_EQ(o.launches.other_kernels, o.contract.kernels) << st->name() << " on " << p.label();
      }
    }
  }
  EXPECT_EQ(runs, 24 * 5 * 2);
}

TEST(StrategiesCpu, packing_is_reported_and_changes_the_gemm_rows) {
  ProblemSpec spec;
  spec.batch = 2; spec.heads = 8; spec.kv_heads = 2; spec.seq_len = 64; spec.q_len = 1; spec.head_dim = 16;
  spec.page_size = 16; spec.kv_layout = KvLayout::paged;
  Problem p = make_problem(spec);
  auto be = make_cpu_backend();
  HostTensors t = make_random_inputs(p, 5);
  for (auto& st : make_strategies("head_batched,fully_batched,ptr_array,nested")) {
    for (bool packing : {true, false}) {
      StrategyOptions opt;
      opt.gqa_packing = packing;
      Outcome o = run_one(*st, p, opt, 3);
      EXPECT_LE(o.rel_l2, tolerance_for(p.dtype));
      std::vector<std::int32_t> lens(2, 64);
      AttentionIO io{t.q.data(), t.k.data(), t.v.data(), nullptr, t.block_table.data(), t.block_table.data(),
                     lens.data(), lens.data()};
      std::vector<std::uint16_t> out(p.q_elements());
      io.o = out.data();
      st->setup(*be, p, io, opt);
      StrategyConfig c = st->config();
      ASSERT_TRUE(c.gqa_packed.has_value()) << st->name();
      EXPECT_EQ(*c.gqa_packed, packing) << st->name();
      // Packed: the 4 query heads of a KV head are 4·q_len = 4 rows of one GEMM; unpacked: 1 row per head.
      bool rows_match = false;
      for (const GemmPlanChoice& g : be->gemm().plan_report())
        rows_match = rows_match || g.shape.rfind(packing ? "m4n" : "m1n", 0) != std::string::npos;
      EXPECT_TRUE(rows_match) << st->name();
      st->teardown(*be);
    }
  }
  // Broadcasting K/V per query head costs the strided strategies a gather even on contiguous KV.
  spec.kv_layout = KvLayout::contiguous;
  Problem c = make_problem(spec);
  StrategyOptions off;
  off.gqa_packing = false;
  for (auto& st : make_strategies("head_batched,fully_batched")) {
    EXPECT_EQ(st->contract(c, off).kernels, st->contract(c).kernels + 1) << st->name();
    EXPECT_GT(st->workspace_bytes(c, off), st->workspace_bytes(c, StrategyOptions{})) << st->name();
  }
}

TEST(StrategiesCpu, every_strategy_matches_fp64_reference_on_awkward_shapes) {
  std::uint64_t seed = 7;
  for (const Problem& p : awkward_problems()) {
    for (auto& st : make_all_strategies()) {
      for (bool fp32_scores : {false, true}) {
        StrategyOptions opt;
        opt.fp32_scores = fp32_scores;
        auto be = make_cpu_backend();
        if (!st->can_implement(p, *be, opt).empty()) continue;
        Outcome o = run_one(*st, p, opt, seed++);
        bool ok = o.nonfinite == 0 && o.rel_l2 <= tolerance_for(p.dtype);
        if (!ok)
          std::fprintf(stderr, "  %s on %s (scores %s): rel_l2 %.3g nonfinite %lld\n", st->name().c_str(),
                       p.label().c_str(), fp32_scores ? "fp32" : "input", o.rel_l2, (long long)o.nonfinite);
        EXPECT_TRUE(ok);
      }
    }
  }
}

TEST(StrategiesCpu, launch_contracts_equal_counted_calls) {
  for (const Problem& p : awkward_problems()) {
    for (auto& st : make_all_strategies()) {
      StrategyOptions opt;
      Outcome o = run_one(*st, p, opt, 99);
      EXPECT_EQ(o.launches.gemm_calls, o.contract.gemm_calls);
      EXPECT_EQ(o.launches.other_kernels, o.contract.kernels);
      EXPECT_EQ(o.launches.kernels, o.contract.total());
    }
  }
}

TEST(StrategiesCpu, contract_formulas_follow_the_design_table) {
  Problem p = make_problem(16, 16, 1024, 64, 32, 0, KvLayout::contiguous, DType::fp16, false);
  auto all = make_all_strategies();
  ASSERT_TRUE(all.size() == 5);
  EXPECT_EQ(all[0]->name(), std::string("nested"));
  EXPECT_EQ(all[0]->contract(p).gemm_calls, 2 * 16 * 16 * 32);
  EXPECT_EQ(all[0]->contract(p).kernels, 16 * 16 * 32 + 1);
  EXPECT_EQ(all[1]->contract(p).gemm_calls, 2 * 32);
  EXPECT_EQ(all[1]->contract(p).kernels, 32 + 1);
  EXPECT_EQ(all[2]->contract(p).gemm_calls, 2);
  EXPECT_EQ(all[2]->contract(p).kernels, 2);
  EXPECT_EQ(all[3]->contract(p).total(), 4);
  EXPECT_EQ(all[4]->contract(p).total(), 1);
  Problem paged = make_problem(2, 2, 100, 64, 3, 0, KvLayout::paged, DType::fp16, false);
  EXPECT_EQ(all[1]->contract(paged).kernels, 3 + 1 + 1);  // + gather
  EXPECT_EQ(all[2]->contract(paged).kernels, 3);
  EXPECT_EQ(all[3]->contract(paged).kernels, 2);           // reads the pool directly
}

TEST(StrategiesCpu, poisoned_output_is_caught_when_a_strategy_writes_nothing) {
  // The check the tests rely on: an output left at the poison value fails comparison.
  Problem p = make_problem(1, 1, 16, 8, 1, 0, KvLayout::contiguous, DType::fp16, false);
  std::vector<std::uint16_t> out(p.q_elements(), 0xFFFF);
  std::vector<double> ref(p.q_elements(), 0.5);
  ErrorStats e = compare_output(p, out.data(), ref.data());
  EXPECT_EQ(e.nonfinite, p.q_elements());
  EXPECT_TRUE(!(e.rel_l2 <= 1.0));
}

TEST(StrategiesCpu, cpu_fused_tiling_matches_reference_for_several_tiles) {
  Problem p = make_problem(2, 2, 77, 16, 5, 0, KvLayout::paged, DType::fp16, true);
  HostTensors t = make_random_inputs(p, 3);
  std::vector<double> ref(p.q_elements());
  reference_attention_fp64(p, t.q.data(), t.k.data(), t.v.data(), t.block_table.data(), ref.data());
  for (int bm : {16, 64, 128})
    for (int bn : {8, 32, 64}) {
      std::vector<std::uint16_t> o(p.q_elements(), 0xFFFF);
      AttentionIO io{t.q.data(), t.k.data(), t.v.data(), o.data(), t.block_table.data(), t.block_table.data()};
      cpu_fused_attention(p, io, bm, bn);
      ErrorStats e = compare_output(p, o.data(), ref.data());
      EXPECT_EQ(e.nonfinite, 0);
      EXPECT_TRUE(e.rel_l2 <= tolerance_for(p.dtype));
    }
}

TEST(StrategiesCpu, parallel_for_rethrows_a_worker_exception_on_the_caller) {
  bool caught = false;
  try {
    parallel_for(64, 1e9, [](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t i = lo; i < hi; ++i)
        if (i == 63) throw std::runtime_error("chunk failed");
    });
  } catch (const std::runtime_error& e) {
    caught = std::string(e.what()) == "chunk failed";
  }
  EXPECT_TRUE(caught);
}


// The inputs (core/reference.hpp): a counter-based stream per tensor over logical indices, so a paged problem
// holds the contiguous one's values wherever the block table puts its rows, ragged tails and unused pool rows
// stay zero, a seed gives the same inputs every time and another seed others, and values are in [-1, 1).
namespace {
// One problem (GQA: 4 query heads, 2 KV heads) contiguous and in 16-token pages.
std::pair<Problem, Problem> contiguous_and_paged(std::vector<std::int64_t> kv_lens, std::int64_t q_len,
                                                 std::int64_t head_dim, std::int64_t head_dim_v, DType dtype) {
  ProblemSpec spec;
  spec.batch = static_cast<std::int64_t>(kv_lens.size());
  spec.heads = 4;
  spec.kv_heads = 2;
  spec.q_len = q_len;
  spec.head_dim = head_dim;
  spec.head_dim_v = head_dim_v;
  spec.kv_lens = std::move(kv_lens);
  spec.dtype = dtype;
  spec.pages = 1;
  const Problem contiguous = make_problem(spec);
  spec.pages = 0;
  spec.page_size = 16;
  spec.kv_layout = KvLayout::paged;
  return {contiguous, make_problem(spec)};
}
}  // namespace

TEST(StrategiesCpu, random_inputs_are_the_same_values_in_either_layout) {
  const auto [c, pg] = contiguous_and_paged({45, 17, 1}, 1, 24, 40, DType::bf16);
  ASSERT_EQ(pg.pages, 3);
  const HostTensors a = make_random_inputs(c, 21), b = make_random_inputs(pg, 21), again = make_random_inputs(pg, 21),
                    other = make_random_inputs(pg, 22);
  EXPECT_EQ(a.q, b.q);
  EXPECT_EQ(b.k, again.k);
  EXPECT_EQ(b.block_table, again.block_table);
  EXPECT_NE(b.k, other.k);
  std::int64_t nonzero = 0;
  for (std::int64_t bi = 0; bi < c.batch; ++bi)
    for (std::int64_t h = 0; h < c.kv_heads; ++h)
      for (std::int64_t s = 0; s < c.kv_len(bi); ++s) {
        for (std::int64_t d = 0; d < c.head_dim; ++d)
          ASSERT_EQ(a.k[kv_index(c, nullptr, bi, h, s, d)], b.k[kv_index(pg, b.block_table.data(), bi, h, s, d)])
              << "K of sequence " << bi << ", head " << h << ", key " << s << ", dim " << d;
        for (std::int64_t d = 0; d < c.head_dim_v; ++d) {
          const std::uint16_t x = b.v[v_index(pg, b.block_table.data(), bi, h, s, d)];
          ASSERT_EQ(a.v[v_index(c, nullptr, bi, h, s, d)], x);
          const float f = bf16_bits_to_float(x);
          EXPECT_TRUE(f >= -1.0f && f <= 1.0f) << f;  // [-1, 1) rounded to bf16 may reach 1
          nonzero += f != 0.0f;
        }
      }
  EXPECT_EQ(nonzero, (45 + 17 + 1) * 2 * 40);
  // The pool rows no sequence uses (the last pages' tails: 3 + 2 + 1 pages of 16 rows for 63 keys) hold zeros.
  ASSERT_EQ(pg.pool_slots(), 6);
  std::int64_t zeros = 0;
  for (std::uint16_t x : b.k) zeros += x == 0;
  EXPECT_EQ(zeros, (6 * 16 - 63) * 2 * 24);
}

// The same on a problem large enough for the fill to run on several threads (parallel_for's threshold).
TEST(StrategiesCpu, random_inputs_drawn_in_parallel_match_in_either_layout) {
  const auto [c, pg] = contiguous_and_paged({3001, 2500}, 3, 64, 64, DType::fp16);
  const HostTensors a = make_random_inputs(c, 5), b = make_random_inputs(pg, 5);
  ASSERT_GT(static_cast<double>(c.batch * c.kv_heads * c.seq_len) * 128 * 8, 2e6) << "above the one-thread limit";
  std::int64_t compared = 0;
  for (std::int64_t bi = 0; bi < c.batch; ++bi)
    for (std::int64_t h = 0; h < c.kv_heads; ++h)
      for (std::int64_t s = 0; s < c.kv_len(bi); ++s)
        for (std::int64_t d = 0; d < c.head_dim; ++d) {
          const std::uint16_t x = a.k[kv_index(c, nullptr, bi, h, s, d)], y = a.v[v_index(c, nullptr, bi, h, s, d)];
          if (x != b.k[kv_index(pg, b.block_table.data(), bi, h, s, d)] ||
              y != b.v[v_index(pg, b.block_table.data(), bi, h, s, d)])
            FAIL() << "sequence " << bi << ", head " << h << ", key " << s << ", dim " << d;
          ++compared;
        }
  EXPECT_EQ(compared, (3001 + 2500) * 2 * 64);
}

// ProblemInputs draws the inputs in backend memory (DeviceMemory::fill_random): on the CPU backend the same
// bits as make_random_inputs, the contiguous slack rows and the unused pool rows zero.
TEST(StrategiesCpu, problem_inputs_hold_the_host_draw) {
  auto be = make_cpu_backend();
  const auto [c, pg] = contiguous_and_paged({45, 17, 1}, 1, 24, 40, DType::fp16);
  for (const Problem& p : {c, pg}) {
    const HostTensors t = make_random_inputs(p, 9);
    ProblemInputs in(*be, p, 9, false);
    const AttentionIO io = in.io();
    std::vector<std::uint16_t> k = t.k, v = t.v;
    if (p.kv_layout == KvLayout::contiguous) {
      k.resize(k.size() + kv_slack_rows(p) * p.head_dim, 0);
      v.resize(v.size() + kv_slack_rows(p) * p.head_dim_v, 0);
    }
    const auto* q = static_cast<const std::uint16_t*>(io.q);
    EXPECT_EQ(std::vector<std::uint16_t>(q, q + t.q.size()), t.q) << p.label();
    EXPECT_EQ(std::vector<std::uint16_t>(static_cast<const std::uint16_t*>(io.k), static_cast<const std::uint16_t*>(io.k) + k.size()), k)
        << p.label();
    EXPECT_EQ(std::vector<std::uint16_t>(static_cast<const std::uint16_t*>(io.v), static_cast<const std::uint16_t*>(io.v) + v.size()), v)
        << p.label();
  }
}

// Every strategy on the CUDA backend against the GPU reference on awkward shapes (seq_len 1000 in 7
// pages, B=3 H=5, D=64/128, causal, bf16, both KV layouts, short last pages), outputs poisoned first,
// with CUPTI's kernel count checked against the strategy's launch contract.
#include <cstdio>
#include <utility>
#include <cstring>

#include "backends/cuda/cuda_backend.hpp"
#include "core/errors.hpp"
#include "core/fused_decode_plan.hpp"
#include "core/random_inputs.hpp"
#include "core/reference.hpp"
#include "core/strategy.hpp"
#include "fused_dev_hooks.cuh"
#include "testing.hpp"
#include "strategies/registry.hpp"

using namespace ab;

namespace {

std::unique_ptr<Backend>& gpu() {
  static std::unique_ptr<Backend> b = make_cuda_backend(0);
  return b;
}

struct Inputs {
  Buffer q, k, v, o, bt, lens, q_lens, ref, sinks;
  std::vector<std::int32_t> bt_host, lens_host, q_lens_host;
  std::vector<float> ref_host;
  AttentionIO io() const {
    AttentionIO a;
    a.q = q.get();
    a.k = k.get();
    a.v = v.get();
    a.o = o.get();
    a.block_table = bt.as<std::int32_t>();
    a.block_table_host = bt_host.empty() ? nullptr : bt_host.data();
    a.kv_lens = lens.as<std::int32_t>();
    a.kv_lens_host = lens_host.data();
    a.q_lens = q_lens.as<std::int32_t>();
    a.q_lens_host = q_lens_host.data();
    a.sinks = sinks.as<float>();
    return a;
  }
};

Inputs prepare(const Problem& p, std::uint64_t seed) {
  Backend& be = *gpu();
  HostTensors t = make_random_inputs(p, seed);
  Inputs in;
  const bool paged = p.kv_layout == KvLayout::paged;
  std::size_t k = paged ? t.k.size() : t.k.size() + kv_slack_rows(p) * p.head_dim;
  std::size_t v = paged ? t.v.size() : t.v.size() + kv_slack_rows(p) * p.head_dim_v;
  in.q = Buffer(be.memory(), t.q.size() * 2);
  in.o = Buffer(be.memory(), p.o_elements() * 2);
  in.k = Buffer(be.memory(), k * 2);
  in.v = Buffer(be.memory(), v * 2);
  be.memory().fill_bytes(in.k.get(), 0, k * 2);
  be.memory().fill_bytes(in.v.get(), 0, v * 2);
  be.memory().upload(in.q.get(), t.q.data(), t.q.size() * 2);
  be.memory().upload(in.k.get(), t.k.data(), t.k.size() * 2);
  be.memory().upload(in.v.get(), t.v.data(), t.v.size() * 2);
  in.bt_host = t.block_table;
  if (!t.block_table.empty()) {
    in.bt = Buffer(be.memory(), t.block_table.size() * 4);
    be.memory().upload(in.bt.get(), t.block_table.data(), t.block_table.size() * 4);
  }
  in.lens_host = kv_lens_of(p);
  in.lens = Buffer(be.memory(), in.lens_host.size() * 4);
  be.memory().upload(in.lens.get(), in.lens_host.data(), in.lens_host.size() * 4);
  in.q_lens_host = q_lens_of(p);
  in.q_lens = Buffer(be.memory(), in.q_lens_host.size() * 4);
  be.memory().upload(in.q_lens.get(), in.q_lens_host.data(), in.q_lens_host.size() * 4);
  if (!t.sinks.empty()) {
    in.sinks = Buffer(be.memory(), t.sinks.size() * 4);
    be.memory().upload(in.sinks.get(), t.sinks.data(), t.sinks.size() * 4);
  }
  in.ref = Buffer(be.memory(), p.o_elements() * 4);
  be.verifier().reference_attention(p, in.io(), in.ref.as<float>());
  be.memory().synchronize();
  in.ref_host.resize(p.o_elements());
  be.memory().download(in.ref_host.data(), in.ref.get(), in.ref_host.size() * 4);
  return in;
}

void run_one(Strategy& st, const Problem& p, const Inputs& in, const StrategyOptions& opt);

// Kernels of ours in a launch record (our kernels live in ab::kernels), the rest are cuBLASLt's.
std::int64_t our_kernels(const LaunchRecord& r) {
  std::int64_t n = 0;
  for (const auto& name : r.kernel_names) {
    if (name.rfind("ab::kernels::", 0) != 0) continue;
    auto x = name.rfind(" x");
    if (x != std::string::npos) n += std::stoll(name.substr(x + 2));
  }
  return n;
}

void run_all(const Problem& p, bool fp32_scores, std::uint64_t seed, bool gqa_packing = true) {
  Backend& be = *gpu();
  Inputs in = prepare(p, seed);
  StrategyOptions opt;
  opt.fp32_scores = fp32_scores;
  opt.gqa_packing = gqa_packing;
  std::printf("  %s%s%s\n", p.label().c_str(), fp32_scores ? " (fp32 scores)" : "",
              p.group() > 1 ? (gqa_packing ? " (GQA packed)" : " (GQA broadcast)") : "");
  for (auto& st : make_all_strategies()) {
    std::string why = st->can_run(p, be, opt);
    if (!why.empty()) {
      std::printf("    %-14s unsupported: %s\n", st->name().c_str(), why.c_str());
      EXPECT_TRUE(st->name() == "fused") << why;  // the four GEMM strategies take every problem
      // The split-KV decode tiles take every q_len <= 16 problem at head_dim 64, 128 and 256, window, cap and
      // sinks included (not a value head dim of its own).
      if (p.q_len <= 16 && (p.head_dim == 64 || p.head_dim == 128 || p.head_dim == 256) && !p.split_head_dim())
        ADD_FAILURE() << "fused refused a problem its decode tiles take: " << p.label() << ": " << why;
      continue;
    }
    try {
      run_one(*st, p, in, opt);
    } catch (const std::exception& ex) {
      ADD_FAILURE() << st->name() + " on " + p.label() + ": " + ex.what();
      try {
        st->teardown(be);
      } catch (...) {
      }
    }
  }
}

// Setup, one poisoned and launch-counted forward, verification, teardown.
void run_one(Strategy& st, const Problem& p, const Inputs& in, const StrategyOptions& opt) {
  Backend& be = *gpu();
  st.setup(be, p, in.io(), opt);
  be.memory().fill_bytes(in.o.get(), 0xFF, in.o.bytes());
  be.memory().synchronize();
  be.profiler().begin_launch_count();
  st.run(be);
  LaunchRecord r = be.profiler().end_launch_count();
  std::vector<std::uint16_t> out(p.o_elements());
  be.memory().download(out.data(), in.o.get(), out.size() * 2);
  ErrorStats e = compare_output(p, out.data(), in.ref_host.data());
  LaunchContract c = st.contract(p, opt);
  std::int64_t ours = our_kernels(r), lib = r.kernels - ours;
  bool split = false;
  for (const auto& g : be.gemm().plan_report())
    if (g.attrs.value("SPLITK_NUM", 1) > 1) split = true;
  std::printf("    %-14s rel_l2 %.2e (tol %.0e) nonfinite %lld | kernels %lld (ours %lld, cuBLASLt %lld) vs contract "
              "%lld gemm + %lld kernels\n",
              st.name().c_str(), e.rel_l2, tolerance_for(p.dtype), static_cast<long long>(e.nonfinite),
              static_cast<long long>(r.kernels), static_cast<long long>(ours), static_cast<long long>(lib),
              static_cast<long long>(c.gemm_calls), static_cast<long long>(c.kernels));
  EXPECT_EQ(e.nonfinite, std::int64_t(0));
  EXPECT_TRUE(e.rel_l2 <= tolerance_for(p.dtype));
  EXPECT_EQ(r.source, std::string("cupti"));
  EXPECT_EQ(r.gemm_calls, c.gemm_calls);
  EXPECT_EQ(r.other_kernels, c.kernels);
  EXPECT_EQ(ours, c.kernels);
  if (lib != c.gemm_calls) {  // the names explain the difference (split-K adds a kernel per call)
    for (const auto& n : r.kernel_names) std::printf("      %s\n", n.c_str());
    if (split) EXPECT_TRUE(lib >= c.gemm_calls);
    else EXPECT_EQ(lib, c.gemm_calls);
  }
  st.teardown(be);
}

// fused on `p` with every compiled tile `pick` takes that can run it (forced through StrategyOptions::config; a
// tile of another head_dim says so and is passed over), each run as run_one runs it and then `again` (if set);
// returns how many tiles ran.
int run_on_tiles(const Problem& p, const Inputs& in, bool (*pick)(const FusedTile&),
                 void (*again)(Strategy&, const Problem&, const Inputs&, const StrategyOptions&) = nullptr) {
  int ran = 0;
  for (const FusedTile& t : gpu()->kernels().fused_tiles()) {
    if (!pick(t)) continue;
    StrategyOptions opt;
    opt.config = t.name();
    auto fused = make_strategies("fused");
    if (!fused.front()->can_run(p, *gpu(), opt).empty()) continue;
    std::printf("  %s tile %s\n", p.label().c_str(), t.name().c_str());
    run_one(*fused.front(), p, in, opt);
    if (again) again(*fused.front(), p, in, opt);
    ++ran;
  }
  return ran;
}

}  // namespace

TEST(CudaStrategies, awkward_causal_bf16_contiguous) {
  run_all(make_problem(3, 5, 1000, 64, 7, 0, KvLayout::contiguous, DType::bf16, true), false, 1);
  run_all(make_problem(3, 5, 1000, 128, 7, 0, KvLayout::contiguous, DType::bf16, true), false, 2);
}

TEST(CudaStrategies, awkward_causal_bf16_paged) {
  run_all(make_problem(3, 5, 1000, 64, 7, 0, KvLayout::paged, DType::bf16, true), false, 3);
  run_all(make_problem(3, 5, 1000, 128, 7, 0, KvLayout::paged, DType::bf16, true), false, 4);
}

TEST(CudaStrategies, small_and_fp32_score_variants) {
  run_all(make_problem(1, 1, 37, 64, 5, 0, KvLayout::paged, DType::fp16, false), false, 5);
  run_all(make_problem(2, 3, 256, 64, 1, 0, KvLayout::contiguous, DType::fp16, false), false, 6);
  run_all(make_problem(2, 3, 300, 128, 4, 0, KvLayout::contiguous, DType::fp16, true), false, 7);
  run_all(make_problem(2, 2, 200, 64, 3, 0, KvLayout::paged, DType::bf16, false), true, 8);
}

// Inference shapes: GQA and MQA, decode and chunked prefill (bottom-right causal), ragged batches, each
// with packing on and off.
Problem inference_problem(std::int64_t b, std::int64_t h, std::int64_t kvh, std::int64_t s, std::int64_t q,
                          std::int64_t d, std::int64_t ps, KvLayout l, DType t, bool causal,
                          std::vector<std::int64_t> lens = {}) {
  ProblemSpec spec;
  spec.batch = b; spec.heads = h; spec.kv_heads = kvh; spec.seq_len = lens.empty() ? s : 0; spec.q_len = q;
  spec.head_dim = d; spec.page_size = ps; spec.kv_layout = l; spec.dtype = t; spec.causal = causal;
  spec.kv_lens = lens;
  return make_problem(spec);
}

TEST(CudaStrategies, inference_shapes_gqa_decode_chunked_ragged) {
  std::uint64_t seed = 20;
  for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
    for (bool packing : {true, false}) {
      run_all(inference_problem(4, 8, 2, 1000, 1, 128, 16, l, DType::fp16, false), false, seed++, packing);
      run_all(inference_problem(2, 6, 1, 333, 5, 64, 16, l, DType::bf16, true), false, seed++, packing);
      run_all(inference_problem(2, 8, 2, 700, 100, 128, 64, l, DType::bf16, true), false, seed++, packing);
      run_all(inference_problem(1, 1, 1, 45, 1, 64, 16, l, DType::fp16, true), false, seed++, packing);
      run_all(inference_problem(4, 4, 2, 0, 1, 64, 16, l, DType::fp16, false, {700, 1, 16, 333}), false, seed++, packing);
      run_all(inference_problem(3, 8, 1, 0, 7, 128, 7, l, DType::bf16, true, {90, 7, 260}), false, seed++, packing);
    }
}

// The sliding window and soft-cap (issue 47) through the GEMM strategies' softmax primitives (WindowCap): a window
// of 1, one ending inside a page, one longer than the sequence, with a cap, GQA packed and broadcast, decode,
// chunked prefill and ragged lengths. The fused decode tiles run every one of them here (q_len <= 16: their
// window base, per-row window start and tanh cap, fused_decode.cuh); prefill_variants_on_the_persistent_tiles
// runs prefill ones.
TEST(CudaStrategies, sliding_window_and_soft_cap) {
  std::uint64_t seed = 60;
  for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
    for (bool packing : {true, false})
      for (std::int64_t window : {1, 13, 5000}) {
        Problem p = inference_problem(3, 8, 2, 0, 7, 64, 16, l, window == 13 ? DType::bf16 : DType::fp16, true,
                                      {90, 7, 260});
        ProblemSpec spec{p.batch, p.heads, p.kv_heads, 0, p.q_len, p.head_dim, 0, p.page_size, p.kv_layout, p.dtype,
                         p.causal, p.kv_lens, p.kv_lens_spec, window, window == 13 ? 3 : 0};
        run_all(make_problem(spec), false, seed++, packing);
        Problem decode = inference_problem(4, 8, 2, 1000, 1, 128, 16, l, DType::fp16, false);
        ProblemSpec ds{decode.batch, decode.heads, decode.kv_heads, decode.seq_len, 1, decode.head_dim, 0, 16,
                       decode.kv_layout, decode.dtype, false, {}, "", window, 50};
        run_all(make_problem(ds), true, seed++, packing);
      }
  // Rows of one page longer than the register-cached softmax holds (1024 x 8 x 4 keys): the long-row WindowCap path.
  ProblemSpec ls{1, 1, 1, 40000, 4, 64, 0, 40000, KvLayout::contiguous, DType::fp16, true, {}, "", 100, 0};
  run_all(make_problem(ls), false, seed++, true);
}

// Attention sinks (the combine and finalize kernels' *_sinks_kernel instances), against the GPU reference (which
// test_cuda_reference checks against the fp64 one): packed GQA rows and not, one page (combine as a finalize)
// and many with a short last page, ragged, decode and q_len > 1, with a window and a cap, fp16 and bf16, and a
// contiguous problem (head_batched and nested finalize, the others combine). The fused decode tiles run the q_len
// <= 16 ones (the sink joins where the splits merge: one split's write, or the combine kernel), the persistent
// prefill tiles the others (their epilogue), the other prefill tiles refuse them.
TEST(CudaStrategies, sinks) {
  std::uint64_t seed = 90;
  for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
    for (bool packing : {true, false}) {
      ProblemSpec s{3, 8, 2, 0, 7, 64, 0, 16, l, DType::bf16, true, {90, 7, 260}, "list", 13, 0};
      s.sinks = true;
      run_all(make_problem(s), false, seed++, packing);
      ProblemSpec d{4, 8, 2, 1000, 1, 128, 0, 1000, l, DType::fp16, false, {}, "", 0, 30};
      d.sinks = true;
      run_all(make_problem(d), true, seed++, packing);
    }
  ProblemSpec one{2, 4, 1, 100, 100, 64, 0, 100, KvLayout::paged, DType::fp16, true, {}, "", 0, 0};
  one.sinks = true;
  run_all(make_problem(one), false, seed++, true);
  // q_len 100: a prefill problem, which the persistent tiles take on Hopper; elsewhere fused says why not.
  std::string why = make_strategies("fused").front()->can_run(make_problem(one), *gpu(), {});
  if (gpu()->device_info().cc_major == 9) EXPECT_EQ(why, "");
  else EXPECT_NE(why, "");
}

// The persistent prefill tiles' variants (fused_kernel_wsp.cuh's VAR instances: an item's key tiles from its first
// row's window, each row's window and the cap in the consumers' mask, the sink in the epilogue), against the GPU
// reference, on Hopper: q_len 100 (a 192-row block with rows past q_len at head_dim 64), ragged 300 / 100 / 517, a
// window of 1, one ending inside a page, 128, one longer than every sequence, the cap alone (3 and 50) and sinks,
// causal and not, contiguous and 16-key pages, fp16 and bf16. fused must take every one.
TEST(CudaStrategies, prefill_variants_on_the_persistent_tiles) {
  if (gpu()->device_info().cc_major != 9) GTEST_SKIP() << "the persistent tiles are built for sm_90a";
  struct Case {
    std::int64_t window, cap;
    bool sinks, causal;
  };
  std::uint64_t seed = 150;
  for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
    for (std::int64_t d : {64, 128})
      for (const Case& c : {Case{1, 0, false, true}, Case{13, 3, false, false}, Case{128, 0, true, true},
                            Case{5000, 50, true, false}, Case{0, 50, false, true}, Case{0, 0, true, false}}) {
        ProblemSpec s{3, 8, 2, 0, 100, d, 0, 16, l, d == 64 ? DType::fp16 : DType::bf16, c.causal, {300, 100, 517},
                      "list", c.window, c.cap};
        s.sinks = c.sinks;
        const Problem p = make_problem(s);
        EXPECT_EQ(make_strategies("fused").front()->can_run(p, *gpu(), {}), "") << p.label();
        run_all(p, false, seed++, true);
      }
  // Every persistent tile (BN 64, 128 and 160 with O staged in Q, the turn-taking D=64 ones), and a grid of 8 CTAs
  // so that each walks many items of different first tiles through one ring (q_len 700: blocks past the first).
  for (std::int64_t d : {64, 128}) {
    ProblemSpec s{2, 8, 2, 0, 700, d, 0, 16, KvLayout::paged, DType::bf16, true, {900, 700}, "list", 128, 30};
    s.sinks = true;
    const Problem p = make_problem(s);
    Inputs in = prepare(p, seed++);
    run_on_tiles(p, in, [](const FusedTile& t) { return t.persistent(); },
                 [](Strategy& st, const Problem& q, const Inputs& qi, const StrategyOptions& opt) {
                   kernels::fused_set_persistent_grid_cap(8);
                   run_one(st, q, qi, opt);
                   kernels::fused_set_persistent_grid_cap(0);
                 });
  }
}

// The variants on the mma.sync prefill tiles of head_dim 32, 96 and 256 and the ws tile of 256 (fused_kernel.cuh's
// and fused_kernel_ws.cuh's VAR instances: no persistent tile has these head dims; Gemma-2's 256 with its cap of 50
// and window): every such tile, forced, on
// awkward problems against the GPU reference: a window of 1, one ending inside a page, one longer than the
// sequence, a window of 200 with q_len 300 (blocks whose first key tiles are skipped), a tight cap and Gemma's,
// sinks, causal and not, ragged lengths with a short last page, contiguous and paged, fp16 and bf16. The plain
// tiles of head_dim 64 and 128 still refuse them.
TEST(CudaStrategies, prefill_variants_on_the_mma_and_ws_tiles) {
  struct Case {
    std::int64_t window, cap;
    bool sinks, causal;
  };
  std::uint64_t seed = 170;
  for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
    for (std::int64_t d : {32, 96, 256})
      for (const Case& c : {Case{1, 0, false, true}, Case{13, 3, true, false}, Case{200, 50, false, true},
                            Case{5000, 50, true, true}, Case{0, 50, false, false}}) {
        ProblemSpec s{2, 8, 2, 0, 300, d, 0, 16, l, d == 96 ? DType::bf16 : DType::fp16, c.causal, {517, 300},
                      "list", c.window, c.cap};
        s.sinks = c.sinks;
        const Problem p = make_problem(s);
        Inputs in = prepare(p, seed++);
        // The persistent tiles: the test above.
        const int ran = run_on_tiles(p, in, [](const FusedTile& t) { return !t.decode() && !t.persistent(); });
        EXPECT_GE(ran, d == 256 && gpu()->device_info().cc_major == 9 ? 2 : 1)
            << p.label() << ": the mma.sync tile (and at head_dim 256 on Hopper the ws tile) should run it";
        EXPECT_EQ(make_strategies("fused").front()->can_run(p, *gpu(), {}), "") << p.label() << ": the default tile";
      }
  ProblemSpec plain{2, 8, 2, 0, 300, 128, 0, 16, KvLayout::paged, DType::fp16, true, {517, 300}, "list", 13, 0};
  StrategyOptions m128;
  m128.config = "m128n64w4s2";
  EXPECT_NE(make_strategies("fused").front()->can_run(make_problem(plain), *gpu(), m128), "");
}

// Decode at head_dim 256 (Gemma 2 and 3: the one-slice, three-stage instances of the cp.async decode kernel and, on
// Hopper with TMA page sizes, of the TMA one's whole-row-box tiles; its 64-column-block tiles refuse it): every
// decode tile that takes it, forced, against the GPU reference: q_len 1, 3 (draft tokens)
// and 5 with 8 query heads a KV head (40 packed rows: three chunks of 16), MQA, ragged lengths with a short last
// page of 16 and pages of 7, a window of 13 and one longer than the sequence, Gemma's cap of 50, sinks, fp16 and
// bf16. The default plan (no tile asked) must take each.
TEST(CudaStrategies, decode_at_head_dim_256) {
  struct Case {
    std::int64_t heads, kv_heads, q_len, page_size, window, cap;
    bool sinks;
    DType dtype;
  };
  std::uint64_t seed = 400;
  for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
    for (const Case& c : {Case{16, 8, 1, 16, 0, 50, false, DType::bf16}, Case{16, 8, 3, 7, 13, 50, true, DType::fp16},
                          Case{8, 1, 5, 16, 5000, 0, false, DType::bf16}, Case{4, 4, 1, 16, 0, 0, true, DType::fp16}}) {
      ProblemSpec s{3, c.heads, c.kv_heads, 0, c.q_len, 256, 0, c.page_size, l, c.dtype, c.q_len > 1, {517, 5, 1000},
                    "list", c.window, c.cap};
      s.sinks = c.sinks;
      const Problem p = make_problem(s);
      Inputs in = prepare(p, seed++);
      const int ran = run_on_tiles(p, in, [](const FusedTile& t) { return t.decode(); });
      // The heuristic's tile and each fixed split count the walked keys allow (a split a 64-key tile at least).
      int counts = 1;
      for (int s : fused_decode::kSearchSplits)
        counts += s <= fused_decode::max_splits(fused_decode::walked_keys_bound(p.seq_len, p.q_len, p.window));
      // Three kernels' tiles where TMA loads the pages (decode, decode-ws-rows, decode-ws-n128-rows), else one.
      const bool tma = gpu()->device_info().cc_major == 9 && (l == KvLayout::contiguous || c.page_size % 8 == 0);
      EXPECT_EQ(ran, counts * (tma ? 3 : 1)) << p.label();
      StrategyOptions ws;
      ws.config = "decode-ws";
      EXPECT_NE(make_strategies("fused").front()->can_run(p, *gpu(), ws), "") << p.label();
      run_all(p, false, seed++, true);  // every strategy, fused's default plan among them
    }
}

// Mixed batches (--q_lens): the GEMM strategies through the key mask's per-sequence query counts, against the GPU
// reference, which test_cuda_reference holds to the fp64 one: decode rows, draft tokens and a prefill chunk in one
// batch, ragged with short last pages, causal, a window, the cap and sinks, GQA packed and broadcast, fp16 and
// bf16, head_dim 64 and 128. fused runs them on its persistent prefill tiles (Hopper: their VAR instances take each
// sequence's own causal diagonal; every persistent tile forced, then its default) and its decode tiles (below); the
// other prefill tiles refuse them with the reason.
TEST(CudaStrategies, mixed_batches_on_the_gemm_strategies_and_the_persistent_tiles) {
  std::uint64_t seed = 500;
  const bool hopper = gpu()->device_info().cc_major == 9;
  for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
    for (bool packing : {true, false}) {
      const std::int64_t d = packing ? 64 : 128;
      ProblemSpec s{4, 8, 2, 0, 0, d, 0, 16, l, packing ? DType::fp16 : DType::bf16, true, {700, 9, 300, 33}, "list",
                    packing ? 13 : 0, packing ? 0 : 30};
      s.q_lens = {1, 4, 300, 1};
      s.q_lens_spec = "list:1,4,300,1";
      s.sinks = !packing;
      const Problem p = make_problem(s);
      const std::string why = make_strategies("fused").front()->can_run(p, *gpu(), {});
      if (hopper) EXPECT_EQ(why, "") << p.label();
      else EXPECT_NE(why.find("per-sequence query counts"), std::string::npos) << why;
      // An mma.sync tile refuses the batch: for its query counts (asked without the variants, which these tiles
      // refuse first at head_dim 64 and 128), and with them for some reason.
      StrategyOptions mma;
      mma.config = "m128n64w4s2";
      ProblemSpec plain_spec = s;
      plain_spec.window = 0;
      plain_spec.softcap = 0;
      plain_spec.sinks = false;
      const std::string plain_why = make_strategies("fused").front()->can_run(make_problem(plain_spec), *gpu(), mma);
      EXPECT_NE(plain_why.find("per-sequence query counts"), std::string::npos) << plain_why;
      EXPECT_NE(make_strategies("fused").front()->can_run(p, *gpu(), mma), "") << p.label();
      if (hopper) {
        Inputs in = prepare(p, seed++);
        EXPECT_GE(run_on_tiles(p, in, [](const FusedTile& t) { return t.persistent(); }), 2) << p.label();
      }
      run_all(p, false, seed++, packing);
    }
}

// A mixed batch of decode rows and draft tokens (q_lens 1-8: speculative decoding with per-sequence draft
// lengths) on every decode tile, forced, and fused's default, against the GPU reference: the kernels' VAR instances
// take each sequence's own causal diagonal (fused_decode.cuh, fused_decode_tma.cuh); padding rows are not compared.
// Ragged with short pages of 16 and 7, GQA (8 heads a KV head: up to 64 packed rows, chunks of 32), a window, the
// cap and sinks, fp16 and bf16, head_dim 64, 128 and 256.
TEST(CudaStrategies, mixed_decode_batches_on_the_decode_tiles) {
  std::uint64_t seed = 520;
  for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
    for (std::int64_t d : {64, 128, 256}) {
      ProblemSpec s{4, 16, 2, 0, 0, d, 0, d == 128 ? 7 : 16, l, d == 64 ? DType::fp16 : DType::bf16, true,
                    {700, 9, 300, 33}, "list", d == 256 ? 0 : 40, d == 64 ? 30 : 0};
      s.q_lens = {1, 3, 8, 2};
      s.q_lens_spec = "list:1,3,8,2";
      s.sinks = d == 128;
      const Problem p = make_problem(s);
      Inputs in = prepare(p, seed++);
      const int ran = run_on_tiles(p, in, [](const FusedTile& t) { return t.decode(); });
      EXPECT_GE(ran, 2) << p.label();
      EXPECT_EQ(make_strategies("fused").front()->can_run(p, *gpu(), {}), "") << p.label();
      run_all(p, false, seed++, true);
    }
}

// A value head dim of its own (V and O head_dim_v wide: the PV GEMMs' width, the gather of K and V at two widths,
// the primitives' accumulator rows), against the GPU reference: DeepSeek-V3's MLA decode shape (576 / 512, one
// KV head for 16 query heads, 64-token pages, q_len 1 and 2) and awkward pairs narrower and wider than K (40 / 24,
// 24 / 40: a short last page, ragged, causal with a window), packed GQA and not, contiguous and paged. The fused
// kernels refuse it.
TEST(CudaStrategies, value_head_dim) {
  std::uint64_t seed = 120;
  for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
    for (bool packing : {true, false}) {
      for (std::int64_t q : {1, 2}) {
        ProblemSpec mla{2, 16, 1, 300, q, 576, 0, 64, l, DType::bf16, false, {}, "", 0, 0};
        mla.head_dim_v = 512;
        run_all(make_problem(mla), false, seed++, packing);
      }
      for (auto [d, dv] : {std::pair<std::int64_t, std::int64_t>{40, 24}, {24, 40}}) {
        ProblemSpec s{3, 8, 2, 0, 5, d, 0, 16, l, DType::fp16, true, {90, 7, 45}, "list", 20, 0};
        s.head_dim_v = dv;
        run_all(make_problem(s), true, seed++, packing);
      }
    }
  ProblemSpec one{1, 16, 1, 300, 1, 576, 0, 64, KvLayout::paged, DType::bf16, false, {}, "", 0, 0};
  one.head_dim_v = 512;
  std::string why = make_strategies("fused").front()->can_run(make_problem(one), *gpu(), {});
  EXPECT_NE(why.find("value head dim"), std::string::npos) << why;
}

int main(int argc, char** argv) {
  if (ab::cuda_device_count() == 0) attnbench_testing::skip_test_program("no CUDA device");
  int rc = attnbench_testing::run_all_tests(argc, argv);
  gpu().reset();
  return rc;
}

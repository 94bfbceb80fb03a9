// Every strategy on the CUDA backend against the GPU reference on awkward shapes (S=1000 in 7 pages,
// B=3, H=5, D=64 and 128, causal, bf16, both KV layouts), outputs poisoned before each run; and CUPTI's
// kernel count against each strategy's launch contract, extra kernels allowed only where their names
// show cuBLASLt's split-K reduction. Skipped (exit 77) without a device.
#include <cstring>
#include <string>
#include <vector>

#include "backends/cuda/cuda_backend.hpp"
#include "core/reference.hpp"
#include "core/strategy.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

std::unique_ptr<Backend> backend() {
  static bool checked = false;
  if (!checked && cuda_device_count() == 0) testing::skip_test_program("no CUDA device");
  checked = true;
  return make_cuda_backend(0);
}

struct Inputs {
  Buffer q, k, v, o, bt, ref;
  std::vector<std::int32_t> bt_host;
  std::vector<float> ref_host;
  AttentionIO io() const {
    return {q.get(), k.get(), v.get(), o.get(), bt.as<std::int32_t>(), bt_host.empty() ? nullptr : bt_host.data()};
  }
};

void prepare(Backend& be, const Problem& p, std::uint64_t seed, Inputs& in) {
  HostTensors t = make_random_inputs(p, seed);
  std::size_t es = dtype_size(p.dtype);
  std::int64_t extra = p.kv_layout == KvLayout::contiguous ? kv_slack_rows(p) * p.head_dim : 0;
  in.q = Buffer(be, t.q.size() * es);
  in.k = Buffer(be, (t.k.size() + extra) * es);
  in.v = Buffer(be, (t.v.size() + extra) * es);
  in.o = Buffer(be, p.qkv_elements() * es);
  be.fill_bytes(in.k.get(), 0, in.k.bytes());
  be.fill_bytes(in.v.get(), 0, in.v.bytes());
  be.upload(in.q.get(), t.q.data(), t.q.size() * es);
  be.upload(in.k.get(), t.k.data(), t.k.size() * es);
  be.upload(in.v.get(), t.v.data(), t.v.size() * es);
  in.bt_host = t.block_table;
  if (!t.block_table.empty()) {
    in.bt = Buffer(be, t.block_table.size() * 4);
    be.upload(in.bt.get(), t.block_table.data(), t.block_table.size() * 4);
  }
  in.ref = Buffer(be, p.qkv_elements() * 4);
  be.reference_attention(p, in.io(), in.ref.as<float>());
  be.synchronize();
  in.ref_host.resize(p.qkv_elements());
  be.download(in.ref_host.data(), in.ref.get(), in.ref_host.size() * 4);
}

// Kernels whose names mark a cuBLASLt split-K reduction, counted from "name xN" entries.
std::int64_t splitk_kernels(const std::vector<std::string>& names) {
  std::int64_t n = 0;
  for (const std::string& s : names) {
    if (s.find("splitK") == std::string::npos && s.find("reduce") == std::string::npos &&
        s.find("Reduce") == std::string::npos)
      continue;
    auto x = s.rfind(" x");
    n += x == std::string::npos ? 1 : std::stoll(s.substr(x + 2));
  }
  return n;
}

}  // namespace

TEST(gpu_reference_matches_cpu_fp64_on_small_shapes) {
  auto be = backend();
  for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
    for (bool causal : {false, true})
      for (DType t : {DType::fp16, DType::bf16}) {
        Problem p = make_problem(2, 3, 37, 64, 5, 0, l, t, causal);
        Inputs in;
        prepare(*be, p, 11, in);
        HostTensors h = make_random_inputs(p, 11);
        std::vector<double> ref(p.qkv_elements());
        reference_attention_fp64(p, h.q.data(), h.k.data(), h.v.data(), h.block_table.data(), ref.data());
        double num = 0, den = 0;
        for (std::size_t i = 0; i < ref.size(); ++i) {
          num += (in.ref_host[i] - ref[i]) * (in.ref_host[i] - ref[i]);
          den += ref[i] * ref[i];
        }
        CHECK(std::sqrt(num / den) < 1e-5);
      }
}

TEST(every_strategy_matches_gpu_reference_and_its_launch_contract) {
  auto be = backend();
  std::vector<Problem> problems;
  for (std::int64_t d : {64, 128})
    for (KvLayout l : {KvLayout::contiguous, KvLayout::paged})
      for (bool causal : {false, true})
        for (DType t : {DType::fp16, DType::bf16}) problems.push_back(make_problem(3, 5, 1000, d, 7, 0, l, t, causal));
  problems.push_back(make_problem(1, 1, 77, 64, 1, 0, KvLayout::contiguous, DType::fp16, false));
  problems.push_back(make_problem(2, 2, 300, 128, 0, 16, KvLayout::paged, DType::bf16, true));
  std::uint64_t seed = 100;
  for (const Problem& p : problems) {
    Inputs in;
    prepare(*be, p, seed++, in);
    for (auto& st : make_all_strategies()) {
      StrategyOptions opt;
      std::string why = st->can_implement(p, *be, opt);
      if (!why.empty()) {
        std::printf("  %-14s %s: unsupported (%s)\n", st->name().c_str(), p.label().c_str(), why.c_str());
        CHECK(st->name() == "fused");  // only the fused kernel has shape limits
        continue;
      }
      st->setup(*be, p, in.io(), opt);
      be->fill_bytes(in.o.get(), 0xFF, in.o.bytes());
      be->synchronize();
      be->begin_launch_count();
      st->run(*be);
      LaunchRecord rec = be->end_launch_count();
      st->teardown(*be);
      std::vector<unsigned char> out(in.o.bytes());
      be->download(out.data(), in.o.get(), out.size());
      ErrorStats e = compare_output(p, out.data(), in.ref_host.data());
      bool ok = e.nonfinite == 0 && e.rel_l2 <= tolerance_for(p.dtype);
      LaunchContract c = st->contract(p);
      std::int64_t extra = rec.kernels - c.total();
      bool launches_ok = extra == 0 || (extra > 0 && extra == splitk_kernels(rec.kernel_names));
      if (!ok || !launches_ok) {
        std::printf("  %-14s %s: rel_l2 %.3g nonfinite %lld, kernels %lld expected %lld\n", st->name().c_str(),
                    p.label().c_str(), e.rel_l2, (long long)e.nonfinite, (long long)rec.kernels, (long long)c.total());
        for (const auto& n : rec.kernel_names) std::printf("      %s\n", n.c_str());
      }
      CHECK(ok);
      CHECK(launches_ok);
      CHECK_EQ(rec.gemm_calls, c.gemm_calls);
      CHECK_EQ(rec.other_kernels, c.kernels);
    }
  }
}

TEST_MAIN()

// An FP8 K/V cache as a problem axis (issue 46 point 1; no strategy runs it yet): --kv_dtype and --kv_scale parse,
// their label, cache key and JSON (absent for a 16-bit cache, so earlier keys and reports still match), bytes
// counted at one byte a K/V element plus the fp32 scales, per-head scales refused without FP8, and every built-in
// strategy refusing the problem with the variant named (so a run says `unsupported`, never a 16-bit time).
#include <cstdint>
#include <string>

#include "backends/cpu/cpu_backend.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"
#include "core/kv_format.hpp"
#include "core/problem.hpp"
#include "core/problem_axes.hpp"
#include "strategies/registry.hpp"
#include "testing.hpp"

using namespace ab;
using attnbench_testing::usage_error_of;

namespace {

ProblemSpec spec(KvFormat f, KvScale s = KvScale::tensor) {
  ProblemSpec p;
  p.batch = 3;
  p.heads = 8;
  p.kv_heads = 2;
  p.seq_len = 1000;
  p.q_len = 1;
  p.head_dim = 128;
  p.page_size = 16;
  p.kv_layout = KvLayout::paged;
  p.dtype = DType::bf16;
  p.kv_format = f;
  p.kv_scale = s;
  return p;
}

}  // namespace

TEST(KvFormat, NamesParseBothWays) {
  for (KvFormat f : {KvFormat::native, KvFormat::fp8_e4m3}) EXPECT_EQ(parse_kv_format(kv_format_name(f)), f);
  for (KvScale s : {KvScale::tensor, KvScale::head}) EXPECT_EQ(parse_kv_scale(kv_scale_name(s)), s);
  EXPECT_EQ(parse_kv_format("e4m3"), KvFormat::fp8_e4m3);
  EXPECT_EQ(parse_kv_format("fp8"), KvFormat::fp8_e4m3);
  EXPECT_FALSE(parse_kv_format("fp8_e5m2").has_value());  // not posed yet
  EXPECT_FALSE(parse_kv_scale("row").has_value());
}

TEST(KvFormat, LabelKeyAndJsonOnlyForFp8) {
  const Problem native = make_problem(spec(KvFormat::native));
  const Problem fp8 = make_problem(spec(KvFormat::fp8_e4m3));
  const Problem per_head = make_problem(spec(KvFormat::fp8_e4m3, KvScale::head));
  EXPECT_EQ(native.label().find("kv="), std::string::npos) << native.label();
  EXPECT_NE(fp8.label().find(" kv=e4m3"), std::string::npos) << fp8.label();
  EXPECT_NE(per_head.label().find(" kv=e4m3/head"), std::string::npos) << per_head.label();
  EXPECT_FALSE(problem_to_json(native).contains("kv_dtype"));
  EXPECT_FALSE(problem_to_json(native).contains("kv_scale"));
  EXPECT_EQ(problem_to_json(per_head).at("kv_dtype"), "fp8_e4m3");
  EXPECT_EQ(problem_to_json(per_head).at("kv_scale"), "head");
  EXPECT_NE(problem_key(native), problem_key(fp8));
  EXPECT_NE(problem_key(fp8), problem_key(per_head));
  EXPECT_NE(problem_cache_key_of_json(problem_to_json(fp8)), problem_cache_key_of_json(problem_to_json(native)));
  EXPECT_NE(problem_cache_key_of_json(problem_to_json(fp8)), problem_cache_key_of_json(problem_to_json(per_head)));
  // Round trips; a problem written before the axis (no kv_dtype) reads as a 16-bit cache.
  for (const Problem& p : {native, fp8, per_head}) EXPECT_TRUE(problem_from_json(problem_to_json(p), "t") == p);
  nlohmann::json old = problem_to_json(native);
  EXPECT_TRUE(problem_from_json(old, "t") == native);
  EXPECT_FALSE(native == fp8);
  EXPECT_FALSE(fp8 == per_head);
}

TEST(KvFormat, BytesCountTheStoredWidthAndTheScales) {
  const Problem native = make_problem(spec(KvFormat::native));
  const Problem fp8 = make_problem(spec(KvFormat::fp8_e4m3));
  const Problem per_head = make_problem(spec(KvFormat::fp8_e4m3, KvScale::head));
  const double q_o = 3.0 * 8 * 1 * (128 + 128) * 2;   // bf16 Q and O
  const double kv_elems = 3.0 * 2 * 1000 * (128 + 128);
  EXPECT_DOUBLE_EQ(native.bytes(), q_o + kv_elems * 2);
  EXPECT_DOUBLE_EQ(fp8.bytes(), q_o + kv_elems * 1 + 2 * 4);        // one scale for K, one for V
  EXPECT_DOUBLE_EQ(per_head.bytes(), q_o + kv_elems * 1 + 2 * 2 * 4);  // and per KV head
  EXPECT_DOUBLE_EQ(fp8.flops(), native.flops());
}

TEST(KvFormat, PerHeadScalesNeedFp8) {
  const std::string why = usage_error_of([] { make_problem(spec(KvFormat::native, KvScale::head)); });
  EXPECT_NE(why.find("--kv_dtype=fp8_e4m3"), std::string::npos) << why;
}

TEST(KvFormat, EveryBuiltInStrategyRefusesItNamingTheVariant) {
  auto cpu = make_cpu_backend();
  const Problem fp8 = make_problem(spec(KvFormat::fp8_e4m3));
  const Problem native = make_problem(spec(KvFormat::native));
  for (const auto& st : make_strategies("nested,head_batched,fully_batched,ptr_array,fused")) {
    EXPECT_EQ(st->can_run(native, *cpu, {}), "") << st->name();
    const std::string why = st->can_run(fp8, *cpu, {});
    EXPECT_NE(why.find(kFp8KvCache), std::string::npos) << st->name() << ": " << why;
  }
}

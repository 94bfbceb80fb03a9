// The split backend seam on the CPU backend: GEMM plans are RAII handles (released on destruction, moved
// not copied, ids never reused), strategies release every plan they made at teardown, a composed backend
// substitutes one interface and keeps the others, the tuner's PlanRecorder wraps only the GEMM engine,
// and the fused strategy is recognised by capability rather than by name.
#include <set>
#include <utility>

#include "backends/cpu/cpu_backend.hpp"
#include "core/backend_decorators.hpp"
#include "core/errors.hpp"
#include "core/strategy.hpp"
#include "run/problem_inputs.hpp"
#include "tune/plan_recorder.hpp"
#include "testing.hpp"
#include "strategies/registry.hpp"

using namespace ab;

namespace {

GemmShape small_shape(std::int64_t m = 16) {
  GemmShape g;
  g.m = m;
  g.n = 16;
  g.k = 8;
  g.lda = 8;
  g.ldb = 16;
  g.ldc = 16;
  return g;
}

std::size_t live_plans(Backend& be) { return be.gemm().plan_report().size(); }

}  // namespace

TEST(BackendSeam, gemm_plan_is_released_when_its_handle_dies) {
  auto be = make_cpu_backend();
  {
    GemmPlan a = be->gemm().make_plan(small_shape());
    ASSERT_TRUE(a.valid());
    EXPECT_EQ(live_plans(*be), 1u);
    GemmPlan b = be->gemm().make_plan(small_shape(32));
    EXPECT_EQ(live_plans(*be), 2u);
    b.reset();
    EXPECT_FALSE(b.valid());
    EXPECT_EQ(live_plans(*be), 1u);
    EXPECT_ANY_THROW(be->gemm().plan_shape(b.id()));  // released: the engine no longer knows it
    EXPECT_EQ(be->gemm().plan_shape(a.id()).m, 16);
  }
  EXPECT_EQ(live_plans(*be), 0u);
}

TEST(BackendSeam, moved_plan_keeps_its_plan_and_ids_are_not_reused) {
  auto be = make_cpu_backend();
  std::set<GemmPlanId> seen;
  GemmPlan kept;
  for (int i = 0; i < 4; ++i) {
    GemmPlan p = be->gemm().make_plan(small_shape(16 + i));
    EXPECT_TRUE(seen.insert(p.id()).second);
    if (i == 1) kept = std::move(p);  // the moved-from handle releases nothing
    EXPECT_FALSE(i == 1 && p.valid());
  }
  ASSERT_TRUE(kept.valid());
  EXPECT_EQ(live_plans(*be), 1u);
  EXPECT_EQ(be->gemm().plan_shape(kept.id()).m, 17);
  GemmPlan again = be->gemm().make_plan(small_shape());
  EXPECT_EQ(seen.count(again.id()), 0u);
}

TEST(BackendSeam, teardown_releases_every_plan_a_strategy_made) {
  auto be = make_cpu_backend();
  Problem p = make_problem(2, 2, 40, 16, 0, 16, KvLayout::contiguous, DType::fp16, false);
  ProblemInputs in(*be, p, 3);
  for (auto& st : make_all_strategies()) {
    st->setup(*be, p, in.io(), StrategyOptions());
    const std::size_t made = live_plans(*be);
    EXPECT_EQ(made > 0, !st->uses_fused_tile()) << st->name();
    st->teardown(*be);
    EXPECT_EQ(live_plans(*be), 0u) << st->name();
  }
}

// A GEMM engine whose make_plan fails from the `fail_at`-th plan on (counting from 0).
class FailingPlans : public ComposedBackend {
 public:
  struct Engine : public ForwardingGemmEngine {
    using ForwardingGemmEngine::ForwardingGemmEngine;
    int made = 0, fail_at = 1;
    GemmPlan make_plan(const GemmShape& shape) override {
      if (made++ >= fail_at) throw BackendError("cuBLASLt heuristic found no algorithm (injected)");
      return ForwardingGemmEngine::make_plan(shape);
    }
  };
  explicit FailingPlans(Backend& inner) : ComposedBackend(inner), engine(inner.gemm()) { replace_gemm(engine); }
  Engine engine;
};

TEST(BackendSeam, a_setup_that_fails_half_way_leaves_no_plan_behind) {
  auto be = make_cpu_backend();
  Problem p = make_problem(1, 2, 40, 16, 0, 16, KvLayout::contiguous, DType::fp16, false);
  ProblemInputs in(*be, p, 3);
  for (auto& st : make_all_strategies()) {
    if (st->uses_fused_tile()) continue;
    for (int fail_at = 1; fail_at < 4; ++fail_at) {
      FailingPlans failing(*be);
      failing.engine.fail_at = fail_at;
      bool threw = false;
      try {
        st->setup(failing, p, in.io(), StrategyOptions());
      } catch (const BackendError&) {
        threw = true;
      }
      if (threw) {
        EXPECT_EQ(live_plans(*be), 0u) << st->name() << " fail_at " << fail_at;
      } else {
        st->teardown(failing);
      }
      EXPECT_EQ(live_plans(*be), 0u) << st->name();
    }
  }
}

TEST(BackendSeam, only_the_fused_strategy_uses_a_fused_tile) {
  for (auto& st : make_all_strategies()) EXPECT_EQ(st->uses_fused_tile(), st->name() == "fused") << st->name();
}

TEST(BackendSeam, plan_recorder_wraps_only_the_gemm_engine) {
  auto be = make_cpu_backend();
  PlanRecorder rec(*be);
  EXPECT_NE(&rec.gemm(), &be->gemm());
  EXPECT_EQ(&rec.memory(), &be->memory());
  EXPECT_EQ(&rec.kernels(), &be->kernels());
  EXPECT_EQ(&rec.verifier(), &be->verifier());
  EXPECT_EQ(&rec.profiler(), &be->profiler());
  EXPECT_EQ(rec.kind(), be->kind());

  Problem p = make_problem(1, 2, 32, 16, 2, 0, KvLayout::contiguous, DType::fp16, false);
  ProblemInputs in(*be, p, 5);
  auto st = make_strategies("fully_batched");
  st[0]->setup(rec, p, in.io(), StrategyOptions());
  // The plans belong to the real engine: its report lists what the recorder saw made.
  ASSERT_EQ(rec.plans().size(), 2u);
  EXPECT_EQ(live_plans(*be), 2u);
  rec.record_calls(true);
  st[0]->run(rec);
  rec.record_calls(false);
  ASSERT_EQ(rec.calls().size(), 2u);  // one QK^T and one PV call
  EXPECT_EQ(rec.calls()[0].plan, rec.plans()[0]);
  EXPECT_EQ(rec.calls()[1].plan, rec.plans()[1]);
  st[0]->teardown(rec);
  EXPECT_EQ(live_plans(*be), 0u);
}

// A composed backend that counts allocations through a substituted memory and leaves the rest alone.
class CountingMemory : public ForwardingMemory {
 public:
  using ForwardingMemory::ForwardingMemory;
  int allocs = 0;
  void* alloc(std::size_t bytes) override {
    allocs++;
    return ForwardingMemory::alloc(bytes);
  }
};

class CountingBackend : public ComposedBackend {
 public:
  explicit CountingBackend(Backend& inner) : ComposedBackend(inner), mem(inner.memory()) { replace_memory(mem); }
  CountingMemory mem;
};

TEST(BackendSeam, composed_backend_substitutes_one_interface) {
  auto be = make_cpu_backend();
  CountingBackend counting(*be);
  EXPECT_EQ(&counting.gemm(), &be->gemm());
  {
    Buffer b(counting.memory(), 64);
    EXPECT_TRUE(b.get() != nullptr);
  }
  Problem p = make_problem(1, 1, 16, 16, 1, 0, KvLayout::contiguous, DType::fp16, false);
  ProblemInputs in(counting, p, 1);
  EXPECT_TRUE(counting.mem.allocs >= 5);  // the buffer, then q, k, v, o and the reference
}

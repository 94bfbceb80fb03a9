// The isolated-run path (run/strategy_session.hpp): setup and teardown exactly once on every path, errors
// turned into failures, the device recovered and the inputs forgotten after a sticky error, and
// context_lost when the device cannot be recovered.
#include <set>
#include <stdexcept>

#include "backends/cpu/cpu_backend.hpp"
#include "core/errors.hpp"
#include "core/backend_decorators.hpp"
#include "run/strategy_session.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

// The CPU backend's memory, keeping what is live so that a simulated context reset can free it (a device
// reset frees every allocation; the session then forgets its buffers rather than freeing them twice).
class ResettableMemory : public ForwardingMemory {
 public:
  using ForwardingMemory::ForwardingMemory;
  ~ResettableMemory() override { reset(); }
  void* alloc(std::size_t bytes) override {
    void* p = m_.alloc(bytes);
    live_.insert(p);
    return p;
  }
  void free(void* p) override {
    if (live_.erase(p)) m_.free(p);
  }
  void reset() {
    for (void* p : live_) m_.free(p);
    live_.clear();
  }

 private:
  std::set<void*> live_;
};

// The CPU backend with a recover() whose answer the test sets, and a count of its calls; a recovery frees
// every allocation, as rebuilding a device context does.
class RecoveringBackend : public ComposedBackend {
 public:
  explicit RecoveringBackend(Backend& inner) : ComposedBackend(inner), memory_(inner.memory()) {
    replace_memory(memory_);
  }
  bool recover() override {
    ++recovers;
    memory_.reset();
    return recover_ok;
  }
  int recovers = 0;
  bool recover_ok = true;

 private:
  ResettableMemory memory_;
};

// A strategy that counts its setups and teardowns; setup throws `setup_error` when set.
class CountingStrategy : public Strategy {
 public:
  std::string name() const override { return "counting"; }
  std::string description() const override { return "test"; }
  LaunchContract contract(const Problem&, const StrategyOptions&) const override { return {}; }
  std::string can_implement(const Problem&, const Backend&, const StrategyOptions&) const override { return ""; }
  std::int64_t workspace_bytes(const Problem&, const StrategyOptions&) const override { return 0; }
  void setup(Backend&, const Problem&, const AttentionIO&, const StrategyOptions&) override {
    ++setups;
    if (setup_sticky) throw BackendError("setup lost the context", true);
  }
  void run(Backend&) override {}
  void teardown(Backend&) override {
    ++teardowns;
    teardown_after_forget = forgets > 0;
    if (teardown_sticky) throw BackendError("teardown lost the context", true);
    if (teardown_throws) throw BackendError("teardown failed");
  }
  void forget_device_memory() override {
    ++forgets;
    recovers_when_forgotten = recover_count ? *recover_count : -1;
  }
  StrategyConfig config() const override { return {}; }
  int setups = 0, teardowns = 0, forgets = 0;
  bool setup_sticky = false, teardown_throws = false, teardown_sticky = false;
  const int* recover_count = nullptr;  // the backend's recoveries, read when the strategy is told to forget
  int recovers_when_forgotten = -1;
  bool teardown_after_forget = false;
};

struct Fixture {
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  RecoveringBackend be{*cpu};
  Problem p = make_problem(1, 1, 8, 16, 1, 0, KvLayout::contiguous, DType::fp16, false);
  ProblemWorkspace ws{be, [this] { return std::make_unique<ProblemInputs>(be, p, 7, false); }};
  CountingStrategy st;
  Fixture() { st.recover_count = &be.recovers; }
};

}  // namespace

TEST(StrategySession, SuccessTearsDownOnce) {
  Fixture f;
  ASSERT_TRUE(f.ws.prepare());
  {
    StrategySession s(f.be, f.st, f.ws);
    auto failure = s.run([&] {
      s.setup(f.p, {});
      s.teardown();
    });
    EXPECT_FALSE(failure.has_value());
  }
  EXPECT_EQ(f.st.setups, 1);
  EXPECT_EQ(f.st.teardowns, 1);
  EXPECT_EQ(f.be.recovers, 0);
  EXPECT_TRUE(f.ws.ready());
}

TEST(StrategySession, DestructorTearsDownWhatTheBodyLeftSetUp) {
  Fixture f;
  ASSERT_TRUE(f.ws.prepare());
  {
    StrategySession s(f.be, f.st, f.ws);
    EXPECT_FALSE(s.run([&] { s.setup(f.p, {}); }).has_value());
    EXPECT_TRUE(s.set_up());
  }
  EXPECT_EQ(f.st.teardowns, 1);
}

TEST(StrategySession, NonStickyErrorFailsAndTearsDownOnce) {
  Fixture f;
  ASSERT_TRUE(f.ws.prepare());
  {
    StrategySession s(f.be, f.st, f.ws);
    auto failure = s.run([&] {
      s.setup(f.p, {});
      throw BackendError("a launch failed");
    });
    ASSERT_TRUE(failure.has_value());
    EXPECT_FALSE(failure->unsupported);
    EXPECT_FALSE(failure->sticky);
    EXPECT_EQ(failure->what, "a launch failed");
  }
  EXPECT_EQ(f.st.teardowns, 1);
  EXPECT_EQ(f.st.forgets, 0);  // the context stands: the strategy frees what it holds
  EXPECT_EQ(f.be.recovers, 0);
  EXPECT_TRUE(f.ws.ready());
}

TEST(StrategySession, UnsupportedIsNotAFailure) {
  Fixture f;
  ASSERT_TRUE(f.ws.prepare());
  StrategySession s(f.be, f.st, f.ws);
  auto failure = s.run([&] {
    s.setup(f.p, {});
    throw UnsupportedError("no tile fits");
  });
  ASSERT_TRUE(failure.has_value());
  EXPECT_TRUE(failure->unsupported);
  EXPECT_EQ(failure->what, "no tile fits");
  EXPECT_EQ(f.st.teardowns, 1);
}

TEST(StrategySession, ErrorBeforeSetupTearsNothingDown) {
  Fixture f;
  ASSERT_TRUE(f.ws.prepare());
  {
    StrategySession s(f.be, f.st, f.ws);
    auto failure = s.run([] { throw std::runtime_error("host out of memory"); });
    ASSERT_TRUE(failure.has_value());
    EXPECT_EQ(failure->what, "host out of memory");
  }
  EXPECT_EQ(f.st.setups, 0);
  EXPECT_EQ(f.st.teardowns, 0);
}

TEST(StrategySession, StickyErrorRecoversForgetsInputsAndTearsDownOnce) {
  Fixture f;
  ASSERT_TRUE(f.ws.prepare());
  f.st.setup_sticky = true;
  {
    StrategySession s(f.be, f.st, f.ws);
    auto failure = s.run([&] { s.setup(f.p, {}); });
    ASSERT_TRUE(failure.has_value());
    EXPECT_TRUE(failure->sticky);
    EXPECT_FALSE(failure->context_lost);
  }
  EXPECT_EQ(f.be.recovers, 1);
  EXPECT_EQ(f.st.teardowns, 1);  // the partly set-up strategy drops its state, once
  EXPECT_FALSE(f.ws.ready());    // the inputs went with the context; prepare() rebuilds them
  EXPECT_TRUE(f.ws.prepare());
}

// The strategy lets go of its device memory (its own buffers, pointers into the inputs) while the old context
// still stands, before the recovery frees every allocation; its teardown comes after (and must not touch it).
TEST(StrategySession, StickyErrorAfterSetupForgetsDeviceMemoryBeforeTheRecovery) {
  Fixture f;
  ASSERT_TRUE(f.ws.prepare());
  {
    StrategySession s(f.be, f.st, f.ws);
    auto failure = s.run([&] {
      s.setup(f.p, {});
      throw BackendError("illegal address", true);
    });
    ASSERT_TRUE(failure.has_value());
    EXPECT_TRUE(failure->sticky);
  }
  EXPECT_EQ(f.st.forgets, 1);
  EXPECT_EQ(f.st.recovers_when_forgotten, 0);
  EXPECT_EQ(f.be.recovers, 1);
  EXPECT_EQ(f.st.teardowns, 1);
  EXPECT_TRUE(f.st.teardown_after_forget);
}

// A sticky error thrown by the strategy's own teardown (a plugin's teardown faulting): teardown has run, but what
// it had not freed yet must not be freed into the rebuilt context, so the strategy is told to forget it too.
TEST(StrategySession, StickyErrorFromTeardownStillForgetsBeforeTheRecovery) {
  Fixture f;
  ASSERT_TRUE(f.ws.prepare());
  f.st.teardown_sticky = true;
  {
    StrategySession s(f.be, f.st, f.ws);
    auto failure = s.run([&] {
      s.setup(f.p, {});
      s.teardown();
    });
    ASSERT_TRUE(failure.has_value());
    EXPECT_TRUE(failure->sticky);
  }
  EXPECT_EQ(f.st.teardowns, 1);
  EXPECT_EQ(f.st.forgets, 1);
  EXPECT_EQ(f.st.recovers_when_forgotten, 0);
  EXPECT_EQ(f.be.recovers, 1);
}

TEST(StrategySession, StickyErrorWithoutRecoveryLosesTheContext) {
  Fixture f;
  ASSERT_TRUE(f.ws.prepare());
  f.be.recover_ok = false;
  f.st.teardown_throws = true;  // a second error while cleaning up changes nothing
  StrategySession s(f.be, f.st, f.ws);
  auto failure = s.run([&] {
    s.setup(f.p, {});
    throw BackendError("illegal address", true);
  });
  ASSERT_TRUE(failure.has_value());
  EXPECT_TRUE(failure->context_lost);
  EXPECT_TRUE(f.ws.device_lost());
  EXPECT_EQ(f.st.teardowns, 1);
}

TEST(StrategySession, UsageErrorPropagatesWhenAsked) {
  Fixture f;
  ASSERT_TRUE(f.ws.prepare());
  {
    StrategySession s(f.be, f.st, f.ws, /*propagate_usage_errors=*/true);
    EXPECT_THROW(s.run([&] {
      s.setup(f.p, {});
      throw UsageError("cannot write the cache");
    }),
                 UsageError);
  }
  EXPECT_EQ(f.st.teardowns, 1);
  StrategySession quiet(f.be, f.st, f.ws);
  auto failure = quiet.run([] { throw UsageError("bad"); });
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->what, "bad");
}

TEST(ProblemWorkspace, PrepareFailureIsRecorded) {
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  RecoveringBackend be(*cpu);
  ProblemWorkspace ws(be, []() -> std::unique_ptr<ProblemInputs> { throw BackendError("upload failed", true); });
  EXPECT_FALSE(ws.prepare());
  EXPECT_EQ(ws.error(), "upload failed");
  EXPECT_TRUE(ws.error_sticky());
  EXPECT_EQ(be.recovers, 1);
  EXPECT_FALSE(ws.device_lost());
  EXPECT_FALSE(ws.ready());
}

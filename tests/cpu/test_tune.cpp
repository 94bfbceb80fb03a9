// The tuner on the CPU backend: candidate search (the heuristic's first choice always included, failing and
// wrong candidates recorded and skipped, the fastest kept), fused tile search, and a tune whose cache the
// chooser then serves (plans report source "cache").
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <unistd.h>

#include "backends/cpu/cpu_backend.hpp"
#include "core/errors.hpp"
#include "core/reference.hpp"
#include "core/strategy.hpp"
#include "tune/gemm_search.hpp"
#include "tune/heuristic_cache.hpp"
#include "tune/plan_recorder.hpp"
#include "run/problem_inputs.hpp"
#include "tune/tune_summary.hpp"
#include "tune/tuner.hpp"
#include "cpu/virtual_clock.hpp"
#include "testing.hpp"
#include "strategies/registry.hpp"

using namespace ab;
using ab_test::VirtualClock;
namespace fs = std::filesystem;

namespace {

std::string temp_file(const std::string& name) {
  static fs::path d = [] {
    fs::path p = fs::temp_directory_path() / ("attnbench_test_tune_" + std::to_string(getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
  }();
  return (d / name).string();
}

// The fakes' GEMM calls cost virtual time: each call advances a clock by its algorithm's declared cost, and
// the timers the tuner makes read that clock (cpu/virtual_clock.hpp). Sleeps measured by the host clock once made these tests flaky
// under the sanitizers on a 2-core machine (a screened candidate 1 ms slower per call than the lucky one came
// in under the 1.5x cut); on the virtual clock a forward's time is exact and the bounds below are equalities
// in disguise.
constexpr double kGemm = 0.25;             // ms of every GEMM call, whatever its algorithm
constexpr double kH = 1.5, kS = 3.0;       // H's and S's extra ms per call

// A cuBLASLt stand-in over the CPU backend. Candidates, by label:
//   H  the heuristic's first choice: correct, 1.5 ms slower per GEMM call
//   X  rejected by set_algo (as cublasLtMatmulAlgoCheck would)
//   W  runs but computes the wrong answer (alpha * 1.5)
//   F  correct and fastest
//   S  correct, 3 ms slower per call
//   W  with slow_wrong = true: also 10 ms slower per call
//   C  (only with crash = true) loses the device context when it runs (a sticky error)
// The exhaustive list has neither H nor any heuristic_first flag, and repeats F.
class FakeLt : public ComposedBackend, public ForwardingGemmEngine, public ForwardingMemory {
 public:
  explicit FakeLt(Backend& cpu)
      : ComposedBackend(cpu), ForwardingGemmEngine(cpu.gemm()), ForwardingMemory(cpu.memory()), clock_(cpu.profiler()) {
    replace_gemm(*this);
    replace_memory(*this);
    replace_profiler(clock_);
  }
  int heuristic_queries = 0;
  bool crash = false;
  int recoveries = 0;
  bool slow_wrong = false;

  static GemmAlgo algo(const std::string& label, int id, bool first = false) {
    GemmAlgo a;
    a.label = label;
    a.attrs = {{"ALGO_ID", id}, {"TILE_ID", 10 + id}};
    for (int i = 0; i < 64; ++i) a.blob.push_back(static_cast<std::uint8_t>(id * 16 + i % 16));
    a.heuristic_first = first;
    return a;
  }
  std::vector<GemmAlgo> candidates(GemmPlanId plan, int top, bool exhaustive) override {
    (void)plan_shape(plan);
    if (exhaustive) return {algo("S", 5), algo("F", 4), algo("W", 3), algo("F", 4), algo("X", 2)};
    heuristic_queries++;
    std::vector<GemmAlgo> all = {algo("H", 1, true), algo("X", 2), algo("W", 3), algo("F", 4), algo("S", 5)};
    if (crash) all.insert(all.begin() + 1, algo("C", 6));
    if (top < static_cast<int>(all.size())) all.resize(static_cast<std::size_t>(top));
    return all;
  }
  void set_algo(GemmPlanId plan, const GemmAlgo& a, const std::string& source) override {
    if (a.label == "X") throw BackendError("cublasLtMatmulAlgoCheck: CUBLAS_STATUS_NOT_SUPPORTED");
    current_[plan] = a.label;
    ForwardingGemmEngine::set_algo(plan, a, source);
  }
  void run(GemmPlanId plan, const void* a, const void* b, void* c, float alpha, float beta) override {
    const std::string label = current(plan);
    if (label == "C") throw BackendError("cublasLtMatmul: an illegal memory access was encountered", true);
    spend(kGemm);
    if (label == "H") spend(kH);
    if (label == "S") spend(kS);
    if (label == "W" && slow_wrong) spend(10.0);
    ForwardingGemmEngine::run(plan, a, b, c, label == "W" ? alpha * 1.5f : alpha, beta);
  }
  bool recover() override {
    recoveries++;
    current_.clear();
    // A real lost context takes its allocations with it and the tuner forgets them; the CPU memory under
    // this fake survives, so free it here (else LeakSanitizer rightly reports it).
    for (void* p : live_) ForwardingMemory::free(p);
    live_.clear();
    return ComposedBackend::recover();
  }
  void* alloc(std::size_t bytes) override {
    void* p = ForwardingMemory::alloc(bytes);
    live_.insert(p);
    return p;
  }
  void free(void* p) override {  // a pointer from before the simulated loss is gone already
    if (live_.erase(p)) ForwardingMemory::free(p);
  }

 protected:
  // The label of the algorithm the plan runs now (H, the heuristic's choice, before any is set). Plan ids
  // are never reused, so a released plan's entry is never read again.
  std::string current(GemmPlanId plan) const {
    auto it = current_.find(plan);
    return it == current_.end() ? "H" : it->second;
  }
  void spend(double ms) { clock_.spend(ms); }

 private:
  std::map<GemmPlanId, std::string> current_;
  std::set<void*> live_;  // allocations since the last recover()
  VirtualClock clock_;
};

MeasureSettings quick() {
  MeasureSettings m;
  m.warmup = 1;
  m.min_samples = 3;
  m.max_samples = 20;
  m.max_noise = 0.5;
  m.max_time_s = 0.2;
  return m;
}

Problem small(std::int64_t pages = 1, KvLayout layout = KvLayout::contiguous) {
  return make_problem(1, 2, 32, 16, pages, 0, layout, DType::fp16, false);
}

// Options for a quick, quiet tune of `strategies` over `problems`.
TuneOptions quick_options(const std::string& strategies, std::vector<Problem> problems = {small()}) {
  TuneOptions opt;
  opt.problems = std::move(problems);
  opt.strategies = strategies;
  opt.measure = quick();
  opt.screen = screening_settings(quick(), 3);
  opt.quiet = true;
  return opt;
}

// Every candidate of a record, for failure messages: label status screen/probe ms, finalist ms, reason.
std::string describe(const GemmTuneRecord& r) {
  std::string s = r.key + ":";
  for (const auto& c : r.candidates)
    s += " [" + c.label + " " + c.status + " screen " + std::to_string(c.screen_ms) + " probe " +
         std::to_string(c.probe_ms) + (c.finalist ? " final " + std::to_string(c.ms) : "") +
         (c.reason.empty() ? "" : " (" + c.reason + ")") + "]";
  return s + " best " + std::to_string(r.best);
}

const CandidateOutcome* by_label(const GemmTuneRecord& r, const std::string& label) {
  for (const auto& c : r.candidates)
    if (c.label == label) return &c;
  return nullptr;
}

std::vector<std::string> plan_sources(Backend& be) {
  std::vector<std::string> out;
  for (const auto& g : be.gemm().plan_report()) out.push_back(g.source);
  return out;
}

// Sets `strategy` up on the problem and returns the sources its GEMM plans report.
std::vector<std::string> sources_after_setup(Backend& be, const std::string& strategy, const Problem& p) {
  ProblemInputs in(be, p, 7);
  auto st = make_strategies(strategy);
  st[0]->setup(be, p, in.io(), StrategyOptions());
  std::vector<std::string> s = plan_sources(be);
  st[0]->teardown(be);
  return s;
}

}  // namespace

TEST(Tune, search_keeps_fastest_correct_candidate_and_records_failures) {
  auto cpu = make_cpu_backend();
  FakeLt lt(*cpu);
  TuneOptions opt = quick_options("head_batched");
  opt.top = 8;
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);  // Q·K^T and P·V
  for (const GemmTuneRecord& r : out.gemm) {
    EXPECT_EQ(r.candidates.size(), std::size_t(5));
    ASSERT_TRUE(r.best >= 0) << describe(r);
    EXPECT_EQ(r.candidates[r.best].label, std::string("F")) << describe(r);
    ASSERT_TRUE(r.baseline >= 0);
    EXPECT_EQ(r.candidates[r.baseline].label, std::string("H"));
    EXPECT_TRUE(r.candidates[r.baseline].baseline);
    EXPECT_EQ(by_label(r, "X")->status, std::string("failed"));
    EXPECT_TRUE(by_label(r, "X")->reason.find("NOT_SUPPORTED") != std::string::npos);
    EXPECT_EQ(by_label(r, "W")->status, std::string("incorrect"));
    EXPECT_EQ(by_label(r, "H")->status, std::string("ok"));
    EXPECT_EQ(by_label(r, "S")->status, std::string("ok"));
    EXPECT_TRUE(by_label(r, "S")->ms > by_label(r, "F")->ms);
    EXPECT_EQ(r.failed(), 2);
    // H costs 1.5 ms more per call than F: about 2x for Q·K^T (the P·V calls, at H, cost that in both), more for P·V
    EXPECT_TRUE(r.gain() > 1.3) << describe(r);
    EXPECT_NEAR(r.gain(), r.baseline_ms() / r.best_ms(), 1e-12);
  }
  // The cache entries carry the winner, the baseline and the failures.
  auto entries = out.cache.gemm_entries();
  ASSERT_TRUE(entries.size() == 2);
  for (const auto& e : entries) {
    EXPECT_EQ(e.algo.label, std::string("F"));
    EXPECT_TRUE(e.algo.blob == FakeLt::algo("F", 4).blob);
    EXPECT_EQ(e.heuristic_algo, std::string("H"));
    EXPECT_EQ(e.candidates, 5);
    EXPECT_EQ(e.failed, 2);
    EXPECT_EQ(e.failures.size(), std::size_t(2));
    EXPECT_TRUE(e.gain > 1.3);
    EXPECT_TRUE(e.heuristic_ms > e.best_ms);
    EXPECT_EQ(e.search, std::string("heuristic"));
    EXPECT_EQ(e.measured_with["strategy"].get<std::string>(), std::string("head_batched"));
  }
  std::string summary = format_tune_summary(out);
  EXPECT_TRUE(summary.find("GEMM shape") != std::string::npos);
  EXPECT_TRUE(summary.find("strided x2") != std::string::npos);
}

TEST(Tune, heuristic_winner_gives_gain_one) {
  auto cpu = make_cpu_backend();
  FakeLt lt(*cpu);
  TuneOptions opt = quick_options("nested");
  opt.top = 2;  // H and X only: X cannot be set, so H must win
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  for (const auto& r : out.gemm) {
    EXPECT_EQ(r.candidates.size(), std::size_t(2));
    ASSERT_TRUE(r.best >= 0);
    EXPECT_EQ(r.best, r.baseline);
    EXPECT_EQ(r.gain(), 1.0);
  }
  for (const auto& e : out.cache.gemm_entries()) EXPECT_TRUE(e.algo.heuristic_first);
}

TEST(Tune, exhaustive_search_always_includes_the_heuristic_first_choice) {
  auto cpu = make_cpu_backend();
  FakeLt lt(*cpu);
  TuneOptions opt = quick_options("fully_batched");
  opt.exhaustive = true;
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  EXPECT_TRUE(lt.heuristic_queries >= 2);  // asked for the heuristic's first choice for each shape
  for (const auto& r : out.gemm) {
    ASSERT_TRUE(r.candidates.size() == 5);  // H + S, F, W, X (the repeated F dropped)
    EXPECT_EQ(r.baseline, 0);
    EXPECT_EQ(r.candidates[0].label, std::string("H"));
    ASSERT_TRUE(r.best >= 0);
    EXPECT_EQ(r.candidates[r.best].label, std::string("F")) << describe(r);
    EXPECT_TRUE(r.gain() > 1.0);
  }
  for (const auto& e : out.cache.gemm_entries()) {
    EXPECT_EQ(e.search, std::string("exhaustive"));
    EXPECT_EQ(e.top, 0);
  }
}

// An exhaustive list capped before it reaches the heuristic's best pick must not lose to --search=heuristic.
class CappedExhaustive : public FakeLt {
 public:
  using FakeLt::FakeLt;
  std::vector<GemmAlgo> candidates(GemmPlanId plan, int top, bool exhaustive) override {
    if (exhaustive) {
      (void)plan_shape(plan);
      return {algo("S", 5), algo("W", 3)};  // F, the fastest, is past the cap
    }
    return FakeLt::candidates(plan, top, false);
  }
};

TEST(Tune, capped_exhaustive_search_still_tries_the_heuristic_top_n) {
  auto cpu = make_cpu_backend();
  CappedExhaustive lt(*cpu);
  TuneOptions opt = quick_options("fully_batched");
  opt.exhaustive = true;
  opt.top = 8;
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  for (const auto& r : out.gemm) {
    ASSERT_TRUE(r.best >= 0);
    EXPECT_EQ(r.candidates[r.best].label, std::string("F")) << describe(r);
  }
}


// Screening and re-measurement. "L" (lucky) is the fastest candidate at first and the slowest after: for
// its first `fast_runs` GEMM calls, and while it has been set no more than `fast_sets` times (screening is
// the first, the finalists' measurement the second). Extra virtual ms per call, over every call's kGemm: F 1,
// S 3, H (the heuristic's choice) 4.5 and L, once slow, 12. F's probe (1.25 ms) is over 1.5x L's lucky one
// (0.25 ms), so F is cut there.
class LuckyLt : public FakeLt {
 public:
  using FakeLt::FakeLt;
  int fast_runs = std::numeric_limits<int>::max();
  int fast_sets = std::numeric_limits<int>::max();
  std::vector<GemmAlgo> candidates(GemmPlanId plan, int top, bool exhaustive) override {
    (void)plan_shape(plan);
    (void)top;
    (void)exhaustive;
    return {algo("H", 1, true), algo("S", 5), algo("L", 7), algo("F", 4)};
  }
  void set_algo(GemmPlanId plan, const GemmAlgo& a, const std::string& source) override {
    if (a.label == "L") l_sets_[plan]++;
    FakeLt::set_algo(plan, a, source);
  }
  void run(GemmPlanId plan, const void* a, const void* b, void* c, float alpha, float beta) override {
    const std::string label = current(plan);
    if (label == "L" && (l_runs_[plan]++ >= fast_runs || l_sets_[plan] > fast_sets))
      spend(12.0);
    if (label == "F") spend(1.0);
    if (label == "H") spend(3.0);  // on top of FakeLt's kH
    FakeLt::run(plan, a, b, c, alpha, beta);
  }

 private:
  std::map<GemmPlanId, int> l_runs_, l_sets_;
};

TEST(Tune, the_winner_comes_from_the_re_measured_finalists_not_the_screen) {
  for (int finalists : {1, 2}) {
    auto cpu = make_cpu_backend();
    LuckyLt lt(*cpu);
    lt.fast_runs = 1 + 3;  // verification and the 3 screening samples (the first one among them)
    TuneOptions opt = quick_options("head_batched");  // one plan per shape, each run once per forward
    opt.finalists = finalists;
    TuneOutcome out = tune_grid(lt, opt);
    ASSERT_TRUE(out.gemm.size() == 2);
    for (const GemmTuneRecord& r : out.gemm) {
      ASSERT_TRUE(r.candidates.size() == 4);
      const CandidateOutcome* l = by_label(r, "L");
      const CandidateOutcome* f = by_label(r, "F");
      const CandidateOutcome* s = by_label(r, "S");
      const CandidateOutcome* h = by_label(r, "H");
      // Every candidate was screened; F's probe was over 1.5x L's lucky one, so F was cut there, and
      // verified only if it became a finalist.
      for (const auto* c : {l, s, h}) {
        EXPECT_EQ(c->status, std::string("ok"));
        EXPECT_TRUE(c->screen_ms > 0);
      }
      EXPECT_TRUE(f->screen_ms > 0);
      EXPECT_DOUBLE_EQ(l->probe_ms, kGemm);        // the probe replays the plan's one call, L still lucky
      EXPECT_DOUBLE_EQ(f->probe_ms, kGemm + 1.0);  // 5x L's: over the 1.5x cut
      EXPECT_EQ(f->status, std::string(finalists == 1 ? "cut" : "ok"));
      EXPECT_TRUE(l->screen_ms < f->screen_ms);  // L screened fastest
      EXPECT_TRUE(h->finalist);                  // the heuristic's choice is always re-measured
      EXPECT_TRUE(l->finalist);
      EXPECT_TRUE(!s->finalist);
      EXPECT_EQ(s->ms, 0.0);
      ASSERT_TRUE(r.best >= 0);
      if (finalists == 1) {
        // Only H and L were re-measured: L is slow now, so H wins and the gain is 1, not L's screened time.
        EXPECT_TRUE(!f->finalist);
        EXPECT_EQ(r.finalists(), 2);
        EXPECT_EQ(r.candidates[r.best].label, std::string("H"));
        EXPECT_EQ(r.gain(), 1.0);
      } else {
        EXPECT_TRUE(f->finalist);
        EXPECT_EQ(r.finalists(), 3);
        EXPECT_EQ(r.candidates[r.best].label, std::string("F")) << describe(r);
        EXPECT_TRUE(r.gain() > 1.4);  // Q·K^T: 4.75+4.75 against 1.25+4.75 ms (P·V at H); P·V: 4.75 against 1.25 a call beside Q·K^T's
      }
      EXPECT_TRUE(l->ms > h->ms);  // re-measured: L is slower than the heuristic's choice
    }
    for (const auto& e : out.cache.gemm_entries()) EXPECT_EQ(e.measured_with["finalists"].get<int>(), finalists + 1);
  }
}

TEST(Tune, the_winner_is_measured_again_and_gives_way_when_it_is_no_faster) {
  auto cpu = make_cpu_backend();
  LuckyLt lt(*cpu);
  lt.fast_sets = 2;   // fast through screening and the finalists' round, slow when measured again
  TuneOptions opt = quick_options("head_batched");
  opt.finalists = 1;  // H and L re-measured; L wins that round
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  for (const GemmTuneRecord& r : out.gemm) {
    const CandidateOutcome* l = by_label(r, "L");
    const CandidateOutcome* h = by_label(r, "H");
    EXPECT_TRUE(l->finalist);
    EXPECT_TRUE(l->finalist_ms > 0);
    EXPECT_TRUE(l->finalist_ms < h->finalist_ms);  // L won the finalists' round...
    EXPECT_TRUE(l->ms > h->ms);                    // ...and lost when measured again
    ASSERT_TRUE(r.best >= 0);
    EXPECT_EQ(r.best, r.baseline);            // so the heuristic's choice stays
    EXPECT_EQ(r.gain(), 1.0);
  }
}

TEST(Tune, screening_times_the_shapes_own_gemm_calls_alone) {
  auto cpu = make_cpu_backend();
  FakeLt lt(*cpu);
  TuneOptions opt = quick_options("nested");  // two calls of each shape per forward, one per head
  opt.finalists = -1;                          // re-measure every verified candidate
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  const GemmTuneRecord& qk = out.gemm[0];
  // Q·K^T is tuned while the P·V shape is still at H (1.5 ms per call): a whole forward holds both heads'
  // P·V calls, but a screen holds none of them: F's Q·K^T calls cost kGemm each, and its screen (a median
  // of 3) stays under the 3 ms floor the P·V calls would add.
  const CandidateOutcome* f = by_label(qk, "F");
  ASSERT_TRUE(f != nullptr);
  ASSERT_TRUE(f->status == "ok");
  EXPECT_TRUE(f->finalist);
  EXPECT_TRUE(f->ms >= 2 * kH);  // the re-measured forward adds its 2 P·V calls at 1.5 ms each
  EXPECT_TRUE(f->screen_ms < 2 * kH);
  // H was verified and screened fully first. The probe replays both calls (--probe_calls=4 > 2), so it is
  // the screen's first sample. S's probe (both heads' Q·K^T calls at 3 ms each) is over 1.5x F's: cut there,
  // with that sample as its screen time. Every candidate is a finalist here, so S was verified then.
  const CandidateOutcome* s = by_label(qk, "S");
  ASSERT_TRUE(s != nullptr);
  EXPECT_EQ(s->screen_samples, 1);
  EXPECT_EQ(s->screen_ms, s->probe_ms);
  EXPECT_TRUE(s->screen_ms >= 2 * kS);
  EXPECT_TRUE(s->finalist);
  EXPECT_EQ(s->status, std::string("ok"));
  EXPECT_TRUE(s->ms >= 2 * kS + 2 * kH);
  EXPECT_EQ(by_label(qk, "H")->screen_samples, 3);
  EXPECT_EQ(f->screen_samples, 3);
  EXPECT_EQ(qk.finalists(), 3);  // H, F and S: X failed, W was incorrect
  EXPECT_EQ(qk.failed(), 2);
  EXPECT_EQ(qk.probe_calls, 2);
  EXPECT_TRUE(qk.verify_s > 0);
  EXPECT_TRUE(qk.screen_s > 0);
  EXPECT_TRUE(qk.confirm_s > 0);
}

TEST(Tune, screen_calls_caps_the_calls_a_screen_replays) {
  auto cpu = make_cpu_backend();
  FakeLt lt(*cpu);
  TuneOptions opt = quick_options("nested");  // two calls of each shape per forward, one per head
  opt.screen_calls = 1;
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  const GemmTuneRecord& qk = out.gemm[0];
  EXPECT_EQ(qk.own_calls, 2);
  EXPECT_EQ(qk.screen_calls, 1);
  const CandidateOutcome* h = by_label(qk, "H");
  ASSERT_TRUE(h != nullptr);
  EXPECT_TRUE(h->screen_ms >= kH);     // one call at 1.5 ms...
  EXPECT_TRUE(h->screen_ms < 2 * kH);  // ...not both heads' (3 ms)
  EXPECT_TRUE(h->ms >= 4 * kH);        // the re-measured forward still runs every call of both shapes
  for (const auto& e : out.cache.gemm_entries()) {
    EXPECT_EQ(e.measured_with["screen_calls"].get<int>(), 1);
    EXPECT_EQ(e.measured_with["own_calls"].get<int>(), 2);
  }
}

TEST(Tune, a_probe_of_fewer_calls_cuts_before_the_screen) {
  auto cpu = make_cpu_backend();
  FakeLt lt(*cpu);
  TuneOptions opt = quick_options("nested");  // two calls of each shape per forward, one per head
  opt.probe_calls = 1;
  opt.finalists = 1;  // F only, besides H: S stays cut
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  const GemmTuneRecord& qk = out.gemm[0];
  EXPECT_EQ(qk.probe_calls, 1);
  EXPECT_EQ(qk.screen_calls, 2);
  const CandidateOutcome* h = by_label(qk, "H");
  ASSERT_TRUE(h != nullptr && h->status == "ok");
  EXPECT_TRUE(h->probe_ms >= kH && h->probe_ms < 2 * kH);  // the probe: one call at 1.5 ms...
  EXPECT_TRUE(h->screen_ms >= 2 * kH);                     // ...the screen: both
  EXPECT_EQ(h->screen_samples, 3);                          // the probe is not one of the screen's samples
  const CandidateOutcome* s = by_label(qk, "S");
  ASSERT_TRUE(s != nullptr);
  EXPECT_EQ(s->status, std::string("cut"));
  EXPECT_TRUE(s->probe_ms >= kS && s->probe_ms < 2 * kS);
  EXPECT_EQ(s->screen_samples, 0);
  EXPECT_DOUBLE_EQ(s->screen_ms, 2 * s->probe_ms);  // scaled to the screen's two calls
  ASSERT_TRUE(qk.best >= 0);
  EXPECT_EQ(qk.candidates[qk.best].label, std::string("F"));
  for (const auto& e : out.cache.gemm_entries()) {
    EXPECT_EQ(e.measured_with["probe_calls"].get<int>(), 1);
    EXPECT_TRUE(e.measured_with["cut"].get<int>() >= 1);
  }
}

TEST(Tune, a_cut_candidate_is_verified_only_as_a_finalist) {
  auto cpu = make_cpu_backend();
  FakeLt lt(*cpu);
  lt.slow_wrong = true;  // W: wrong and 10 ms slower per call, probed after H (1.5 ms)
  TuneOptions opt = quick_options("head_batched");
  opt.finalists = 1;  // F, besides H
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  for (const GemmTuneRecord& r : out.gemm) {
    const CandidateOutcome* w = by_label(r, "W");
    EXPECT_EQ(w->status, std::string("cut"));  // verified, it would be "incorrect"
    EXPECT_EQ(w->reason, std::string());
    EXPECT_FALSE(w->finalist);
    EXPECT_EQ(r.failed(), 1);  // X
    EXPECT_EQ(r.candidates[r.best].label, std::string("F")) << describe(r);
  }
  for (const auto& e : out.cache.gemm_entries()) EXPECT_EQ(e.failed, 1);
  // Every candidate a finalist: W is verified then, and found wrong.
  opt.finalists = -1;
  out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  for (const GemmTuneRecord& r : out.gemm) {
    const CandidateOutcome* w = by_label(r, "W");
    EXPECT_EQ(w->status, std::string("incorrect"));
    EXPECT_TRUE(w->reason.find("when verified as a finalist (it was cut after its probe)") != std::string::npos);
    EXPECT_EQ(r.candidates[r.best].label, std::string("F")) << describe(r);
  }
  // No probe: W is verified in the screen.
  opt.finalists = 1;
  opt.screen_cutoff = 0;
  out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  for (const GemmTuneRecord& r : out.gemm) {
    EXPECT_EQ(by_label(r, "W")->status, std::string("incorrect"));
    EXPECT_FALSE(by_label(r, "W")->finalist);
    EXPECT_EQ(r.probe_calls, 0);
    EXPECT_EQ(r.cut(), 0);
  }
}

// "Z" is correct and fast on the operands of its first call after it is set, and wrong on any others: it
// passes on a forward with one call per shape (B=1 H=1, or a batched strategy) and fails on nested's own
// forward, whose second head has other operands.
class LateWrongLt : public FakeLt {
 public:
  using FakeLt::FakeLt;
  std::vector<GemmAlgo> candidates(GemmPlanId plan, int top, bool exhaustive) override {
    std::vector<GemmAlgo> v = FakeLt::candidates(plan, top, exhaustive);
    v.push_back(algo("Z", 8));
    return v;
  }
  void set_algo(GemmPlanId plan, const GemmAlgo& a, const std::string& source) override {
    first_operands_.erase(plan);
    FakeLt::set_algo(plan, a, source);
  }
  void run(GemmPlanId plan, const void* a, const void* b, void* c, float alpha, float beta) override {
    const auto operands = std::make_pair(a, b);
    first_operands_.emplace(plan, operands);
    const bool wrong = current(plan) == "Z" && first_operands_[plan] != operands;
    FakeLt::run(plan, a, b, c, wrong ? alpha * 1.5f : alpha, beta);
  }

 private:
  std::map<GemmPlanId, std::pair<const void*, const void*>> first_operands_;
};

TEST(Tune, nested_candidates_are_verified_on_one_head_and_finalists_on_the_problem) {
  auto cpu = make_cpu_backend();
  LateWrongLt lt(*cpu);
  TuneOptions opt = quick_options("nested,head_batched");
  opt.screen_cutoff = 0;  // no probe: Z (as fast as F) is verified in the screen whatever the probes' noise
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 4);
  for (const GemmTuneRecord& r : out.gemm) {
    const bool nested = r.strategy == "nested";
    // nested's shapes are found on B=1 H=1; head_batched's carry the head count and are verified in place.
    EXPECT_EQ(r.verified_on, nested ? std::string("B=1 H=1 S=32 D=16 P=1 contiguous fp16") : small().label());
    const CandidateOutcome* w = by_label(r, "W");
    const CandidateOutcome* z = by_label(r, "Z");
    ASSERT_TRUE(w != nullptr);
    ASSERT_TRUE(z != nullptr);
    EXPECT_EQ(w->status, std::string("incorrect"));  // wrong on every call: caught on either problem
    EXPECT_TRUE(!w->finalist);
    if (nested) {
      // Z passed on one head, was screened among the fastest, and failed when verified on both heads.
      EXPECT_TRUE(z->finalist);
      EXPECT_EQ(z->status, std::string("incorrect"));
      EXPECT_TRUE(z->reason.find("on the tuned problem") != std::string::npos);
    } else {
      EXPECT_EQ(z->status, std::string("ok"));  // one call per forward: never wrong here
    }
    ASSERT_TRUE(r.best >= 0);
    if (nested) {
      EXPECT_TRUE(r.candidates[r.best].label != "Z");
    }
    EXPECT_TRUE(r.candidates[r.best].label != "W");
  }
  for (const auto& e : out.cache.gemm_entries()) EXPECT_TRUE(e.measured_with.contains("verified_on"));
}

TEST(Tune, screen_cutoff_zero_screens_every_candidate_fully) {
  auto cpu = make_cpu_backend();
  FakeLt lt(*cpu);
  TuneOptions opt = quick_options("head_batched");
  opt.screen_cutoff = 0;
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  for (const auto& r : out.gemm)
    for (const auto& c : r.candidates) {
      if (c.status == "ok") {
        EXPECT_EQ(c.screen_samples, 3);
      }
    }
}

TEST(Tune, finalist_indices_put_the_baseline_first_then_screen_order) {
  GemmTuneRecord r;
  auto add = [&](const char* status, double screen) {
    CandidateOutcome c;
    c.status = status;
    c.screen_ms = screen;
    r.candidates.push_back(c);
  };
  add("ok", 5);        // 0: baseline, slowest
  add("ok", 2);        // 1
  add("failed", 0);    // 2
  add("ok", 1);        // 3
  add("incorrect", 0); // 4
  add("ok", 3);        // 5
  r.baseline = 0;
  EXPECT_TRUE(finalist_indices(r, 2) == std::vector<int>({0, 3, 1}));
  EXPECT_TRUE(finalist_indices(r, -1) == std::vector<int>({0, 3, 1, 5}));
  EXPECT_TRUE(finalist_indices(r, 10) == std::vector<int>({0, 3, 1, 5}));
  // An exhaustive list that starts with the heuristic's top-3 (0, 1 and the failed 2) re-measures 1 as well.
  r.heuristic_top = 3;
  EXPECT_TRUE(finalist_indices(r, 1) == std::vector<int>({0, 3, 1}));
  EXPECT_TRUE(finalist_indices(r, 2) == std::vector<int>({0, 3, 1}));
  r.heuristic_top = 0;
  r.candidates[0].status = "failed";  // a baseline that failed is not re-measured
  EXPECT_TRUE(finalist_indices(r, 1) == std::vector<int>({3}));
}

// Exhaustive search against the screen's winner's curse: with one finalist, the lucky L (fastest screened,
// slow after) is re-measured, and so is every heuristic top-N candidate, F among them, which wins.
TEST(Tune, exhaustive_search_re_measures_the_heuristic_top_n) {
  auto cpu = make_cpu_backend();
  LuckyLt lt(*cpu);
  lt.fast_runs = 1 + 3;  // fast through verification and screening, slow from the finalists on
  TuneOptions opt = quick_options("head_batched");
  opt.exhaustive = true;
  opt.finalists = 1;
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  for (const GemmTuneRecord& r : out.gemm) {
    EXPECT_EQ(r.heuristic_top, 4);  // LuckyLt's top-N is its whole list
    EXPECT_TRUE(by_label(r, "L")->finalist);
    EXPECT_TRUE(by_label(r, "F")->finalist);
    EXPECT_TRUE(by_label(r, "S")->finalist);
    ASSERT_TRUE(r.best >= 0);
    EXPECT_EQ(r.candidates[r.best].label, std::string("F")) << describe(r);
  }
}

TEST(Tune, dry_run_lists_candidates_and_tiles_without_timing) {
  auto cpu = make_cpu_backend();
  FakeLt lt(*cpu);
  TuneOptions opt = quick_options("head_batched,fused");
  opt.exhaustive = true;
  opt.dry_run = true;
  int checkpoints = 0;
  opt.checkpoint = [&](const HeuristicCache&) { checkpoints++; };
  TuneOutcome out = tune_grid(lt, opt);
  ASSERT_TRUE(out.gemm.size() == 2);
  for (const auto& r : out.gemm) {
    EXPECT_EQ(r.algos.size(), std::size_t(5));  // H + S, F, W, X
    EXPECT_EQ(r.algos[0].label, std::string("H"));
    EXPECT_EQ(r.baseline, 0);
    EXPECT_TRUE(r.candidates.empty());
    EXPECT_EQ(r.best, -1);
  }
  ASSERT_TRUE(out.fused.size() == 1);
  EXPECT_EQ(out.fused[0].tiles.size(), cpu->kernels().fused_tiles().size());
  EXPECT_TRUE(out.fused[0].candidates.empty());
  EXPECT_TRUE(out.cache.gemm_entries().empty());
  EXPECT_TRUE(out.cache.fused_entries().empty());
  EXPECT_EQ(checkpoints, 0);
  std::string summary = format_tune_summary(out);
  EXPECT_TRUE(summary.find("10 candidates over 2 GEMM shapes") != std::string::npos);
  EXPECT_TRUE(summary.find("dry run") != std::string::npos);
}

TEST(Tune, end_to_end_tune_on_cpu_then_cache_serves_the_plans) {
  auto cpu = make_cpu_backend();
  TuneOptions opt = quick_options("all", {small(1), small(3, KvLayout::paged)});
  int checkpoints = 0;
  std::size_t last_checkpoint_entries = 0;
  opt.checkpoint = [&](const HeuristicCache& c) {
    checkpoints++;
    EXPECT_TRUE(!c.empty());
    last_checkpoint_entries = c.gemm_entries().size() + c.fused_entries().size();
  };
  TuneOutcome out = tune_grid(*cpu, opt);
  EXPECT_TRUE(checkpoints >= 2);  // after every tuned shape and fused problem
  EXPECT_EQ(last_checkpoint_entries, out.gemm.size() + out.fused.size());
  EXPECT_EQ(out.failed_strategies, 0);
  EXPECT_TRUE(out.gemm.size() >= 8);
  for (const auto& r : out.gemm) {
    EXPECT_TRUE(r.best >= 0);
    EXPECT_EQ(r.candidates.size(), std::size_t(1));  // the CPU backend's single "cpu-reference"
    EXPECT_EQ(r.gain(), 1.0);
  }
  ASSERT_TRUE(out.fused.size() == 2);
  for (const auto& r : out.fused) {
    EXPECT_EQ(r.tiles.size(), cpu->kernels().fused_tiles().size());
    EXPECT_EQ(r.baseline, 0);
    ASSERT_TRUE(r.best >= 0);
    EXPECT_TRUE(r.gain() >= 1.0);
  }
  // Every distinct shape was tuned once: no two records share a key.
  for (std::size_t i = 0; i < out.gemm.size(); ++i)
    for (std::size_t j = i + 1; j < out.gemm.size(); ++j) EXPECT_TRUE(out.gemm[i].key != out.gemm[j].key);

  std::string path = temp_file("e2e.json");
  out.cache.save(path);
  HeuristicCache loaded = HeuristicCache::load(path);
  EXPECT_EQ(loaded.gemm_entries().size(), out.gemm.size());
  EXPECT_EQ(loaded.fused_entries().size(), out.fused.size());

  // A fresh backend without the cache: every plan from the heuristic.
  auto plain = make_cpu_backend();
  for (const char* s : {"nested", "head_batched", "fully_batched", "ptr_array"})
    for (const std::string& src : sources_after_setup(*plain, s, opt.problems[1])) EXPECT_EQ(src, std::string("heuristic"));
  // With it installed: every plan from the cache, and the fused tile is the tuned one.
  auto served = make_cpu_backend();
  EXPECT_EQ(loaded.install(*served), 0);
  for (const Problem& p : opt.problems)
    for (const char* s : {"nested", "head_batched", "fully_batched", "ptr_array"}) {
      auto srcs = sources_after_setup(*served, s, p);
      EXPECT_TRUE(!srcs.empty());
      for (const std::string& src : srcs) EXPECT_EQ(src, std::string("cache"));
    }
  for (const auto& r : out.fused) {
    auto t = loaded.fused_tile(r.problem, served->device_info());
    ASSERT_TRUE(t.has_value());
    EXPECT_TRUE(*t == r.tiles[r.best]);
  }
  // A problem that was not tuned has no tile and its shapes are not served.
  Problem other = make_problem(1, 2, 48, 16, 1, 0, KvLayout::contiguous, DType::fp16, false);
  EXPECT_TRUE(!loaded.fused_tile(other, served->device_info()).has_value());
  for (const std::string& src : sources_after_setup(*served, "head_batched", other)) EXPECT_EQ(src, std::string("heuristic"));

  // Tuning starts from the heuristic even on a backend with a cache installed: the chooser is cleared.
  TuneOptions again = opt;
  again.problems = {small(1)};
  again.strategies = "head_batched";
  again.checkpoint = nullptr;
  TuneOutcome out2 = tune_grid(*served, again);
  EXPECT_EQ(out2.gemm.size(), std::size_t(2));
  for (const std::string& src : sources_after_setup(*served, "head_batched", small(1))) EXPECT_EQ(src, std::string("heuristic"));
}

TEST(Tune, skip_cached_reuses_entries_instead_of_retuning) {
  auto cpu = make_cpu_backend();
  TuneOptions opt = quick_options("head_batched,fused", {small(1)});
  TuneOutcome first = tune_grid(*cpu, opt);
  ASSERT_TRUE(first.gemm.size() == 2);
  ASSERT_TRUE(first.fused.size() == 1);
  opt.skip_cached = &first.cache;
  opt.problems = {small(1), small(2)};
  TuneOutcome second = tune_grid(*cpu, opt);
  EXPECT_EQ(second.cached_plans, 2);
  EXPECT_EQ(second.fused.size(), std::size_t(1));  // only the new problem
  EXPECT_TRUE(second.fused[0].problem == small(2));
  for (const auto& r : second.gemm) EXPECT_TRUE(first.cache.find_gemm(r.key, first.env) == nullptr);
}

TEST(Tune, a_candidate_that_loses_the_device_is_skipped_after_recovery) {
  auto cpu = make_cpu_backend();
  FakeLt lt(*cpu);
  lt.crash = true;
  TuneOptions opt = quick_options("head_batched");
  TuneOutcome out = tune_grid(lt, opt);
  EXPECT_EQ(lt.recoveries, 2);  // once per shape: the retry skips C, the next shape crashes on its own C
  EXPECT_EQ(out.failed_strategies, 0);
  ASSERT_TRUE(out.gemm.size() == 2);
  for (const auto& r : out.gemm) {
    EXPECT_EQ(r.candidates.size(), std::size_t(6));
    const CandidateOutcome* c = by_label(r, "C");
    ASSERT_TRUE(c != nullptr);
    EXPECT_EQ(c->status, std::string("failed"));
    EXPECT_TRUE(c->reason.find("device context") != std::string::npos);
    ASSERT_TRUE(r.best >= 0);
    EXPECT_EQ(r.candidates[r.best].label, std::string("F")) << describe(r);
  }
  bool retried = false;
  for (const auto& n : out.notes) retried = retried || n.find("retrying without that candidate") != std::string::npos;
  EXPECT_TRUE(retried);
}

TEST(Tune, check_forward_rejects_wrong_and_unwritten_outputs) {
  auto cpu = make_cpu_backend();
  Problem p = make_problem(2, 3, 40, 16, 1, 0, KvLayout::contiguous, DType::fp16, false);
  ProblemInputs in(*cpu, p, 11);
  std::vector<double> ref(p.q_elements());
  AttentionIO io = in.io();
  reference_attention_fp64(p, io.q, io.k, io.v, nullptr, ref.data());
  auto write_scaled = [&](double scale) {
    return [&, scale] {
      for (std::int64_t i = 0; i < p.q_elements(); ++i) store_element(io.o, i, p.dtype, ref[i] * scale);
    };
  };
  EXPECT_EQ(in.check_forward(write_scaled(1.0)), std::string(""));
  std::string wrong = in.check_forward(write_scaled(1.02));
  EXPECT_TRUE(wrong.find("rel L2 error 0.02") != std::string::npos);
  std::string unwritten = in.check_forward([] {});
  EXPECT_TRUE(unwritten.find("NaN/Inf") != std::string::npos);
  // It agrees with compare_output on the same output.
  in.check_forward(write_scaled(1.004));
  ErrorStats e = compare_output(p, io.o, ref.data());
  EXPECT_TRUE(e.rel_l2 > 0.003 && e.rel_l2 < 0.005);
  EXPECT_EQ(in.check_forward(write_scaled(1.004)), std::string(""));  // 0.004 is within fp16's 5e-3
}

TEST(Tune, bad_options_are_usage_errors) {
  auto cpu = make_cpu_backend();
  TuneOptions opt = quick_options("all");
  opt.top = 0;
  EXPECT_ANY_THROW(tune_grid(*cpu, opt));
  opt.top = 8;
  opt.strategies = "nested,warp_speed";
  EXPECT_ANY_THROW(tune_grid(*cpu, opt));
  opt.strategies = "all";
  opt.measure.min_samples = 0;
  EXPECT_ANY_THROW(tune_grid(*cpu, opt));
}


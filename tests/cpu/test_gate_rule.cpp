// The CI gate's rule on the CPU, end to end: the real runner (rounds on fresh placements interleaved over the
// grid, the injected-slowdown calibration) and the real compare, over a backend whose timer drifts the way an
// H200's does (docs/ci-gate.md): every simulated process has its own offset, every placement (a problem's first
// inputs, and each round's relocation) its own; over time a slow drift wanders (about 1% over tens of samples)
// and bursts of a 7% slower state come and go; every sample has its own noise.
// Unchanged runs compared pairwise must give no slower or faster row; slowed runs must be caught.
#include <cmath>
#include <random>

#include "backends/cpu/cpu_backend.hpp"
#include "core/backend_decorators.hpp"
#include "core/problem.hpp"
#include "report/compare.hpp"
#include "report/report_io.hpp"
#include "run/run_report.hpp"
#include "run/runner.hpp"
#include "testing.hpp"

using namespace ab;
using nlohmann::json;

// The documents built here go through the one typed reader, as `attnbench compare` reads its files.
static CompareResult compare_reports(const json& base, const json& next, const CompareOptions& o) {
  return ab::compare_reports(report_from_json(base, "'base'"), report_from_json(next, "'new'"), o);
}

namespace {

// The drift, sized to the H200 study (docs/ci-gate.md: a single round's median moved 0.1-2.6% between runs,
// the gate's center 0.1-0.5%): a process offset of 0.2%, a placement one of 0.7%, a slow drift of 0.7%
// decorrelating over ~50 samples, 1% per sample, and a 7% slower state that starts on 1% of samples and
// lasts 20 samples on average (nested's bursts).
struct Drift {
  double process = 0.002, placement = 0.007, sample = 0.01;
  double drift = 0.007, drift_memory = 0.98;
  double burst = 0.07, burst_enter = 0.01, burst_exit = 0.05;
};

class DriftBackend : public ComposedBackend,
                     private ForwardingProfiler,
                     private ForwardingMemory,
                     private ForwardingVerifier {
 public:
  DriftBackend(Backend& inner, std::uint64_t process_seed, Drift d)
      : ComposedBackend(inner),
        ForwardingProfiler(inner.profiler()),
        ForwardingMemory(inner.memory()),
        ForwardingVerifier(inner.verifier()),
        rng_(process_seed),
        d_(d) {
    replace_profiler(*this);
    replace_memory(*this);
    replace_verifier(*this);
    process_offset_ = gauss(d_.process);
    new_placement();
  }
  std::unique_ptr<DeviceTimer> make_timer() override { return std::make_unique<Timer>(*this); }
  void enqueue_delay(double ms) override { pending_delay_ms_ += ms; }
  void relocate_buffers(std::uint64_t) override { new_placement(); }
  // The reference is computed once per problem, on that problem's first placement.
  void reference_attention(const Problem& p, const AttentionIO& io, float* out) override {
    new_placement();
    v_.reference_attention(p, io, out);
  }

 private:
  class Timer : public DeviceTimer {
   public:
    explicit Timer(DriftBackend& b) : b_(b) {}
    void start() override {}
    void stop() override {}
    double elapsed_ms() override { return b_.sample_ms(); }

   private:
    DriftBackend& b_;
  };
  double gauss(double sd) { return std::normal_distribution<double>(0.0, sd)(rng_); }
  void new_placement() { placement_offset_ = gauss(d_.placement); }
  double sample_ms() {
    drift_ = d_.drift_memory * drift_ + gauss(d_.drift * std::sqrt(1 - d_.drift_memory * d_.drift_memory));
    double u = std::uniform_real_distribution<double>(0, 1)(rng_);
    slow_ = slow_ ? u >= d_.burst_exit : u < d_.burst_enter;
    double ms = 1.0 * (1 + process_offset_) * (1 + placement_offset_) * (1 + drift_) * (1 + (slow_ ? d_.burst : 0)) *
                    (1 + gauss(d_.sample)) +
                pending_delay_ms_;
    pending_delay_ms_ = 0;
    return ms;
  }

  std::mt19937_64 rng_;
  Drift d_;
  double process_offset_ = 0, placement_offset_ = 0, pending_delay_ms_ = 0, drift_ = 0;
  bool slow_ = false;
};

std::vector<Problem> problems() {
  Problem a = make_problem(1, 2, 24, 16, 1, 0, KvLayout::contiguous, DType::fp16, false);
  Problem b = make_problem(1, 2, 37, 16, 3, 0, KvLayout::paged, DType::bf16, true);
  return {a, b};
}

// One simulated process: a report of the problems above through every strategy.
json simulated_run(std::uint64_t process, int rounds, double slowdown, Drift drift = {}) {
  auto cpu = make_cpu_backend();
  DriftBackend be(*cpu, process, drift);
  RunOptions opt;
  opt.problems = problems();
  opt.verify = true;
  opt.quiet = true;
  opt.measure.warmup = 1;
  opt.measure.min_samples = 5;
  opt.measure.max_samples = 40;
  opt.measure.rounds = rounds;
  if (slowdown > 0) opt.slowdown["*"] = slowdown;
  std::vector<std::string> warnings;
  Report report;
  report.tool = this_tool();
  report.device = {{"backend", "cpu"}, {"name", "drifting fake"}};
  report.settings = opt.measure.to_json();
  report.rows = run_grid_rows(be, opt, &warnings);
  return to_json(report);  // the document as run writes it, read back by compare
}

struct Tally {
  int rows = 0, slower = 0, faster = 0, ambiguous = 0, pairs_failing = 0;
};

Tally compare_all(const std::vector<json>& base, const std::vector<json>& next, bool pairs_within,
                  const CompareOptions& opt = CompareOptions{}) {
  Tally t;
  for (std::size_t i = 0; i < base.size(); ++i)
    for (std::size_t j = pairs_within ? i + 1 : 0; j < next.size(); ++j) {
      CompareResult c = compare_reports(base[i], next[j], opt);
      for (const CompareRow& r : c.rows) {
        ++t.rows;
        t.slower += r.verdict == Verdict::slower;
        t.faster += r.verdict == Verdict::faster;
        t.ambiguous += r.verdict == Verdict::ambiguous;
      }
      t.pairs_failing += c.exit_code() != 0;
    }
  return t;
}

}  // namespace

TEST(GateRule, rows_combine_rounds_and_say_so) {
  json r = simulated_run(7, 20, 0);
  ASSERT_TRUE(r["results"].size() == 10u);
  for (const json& row : r["results"]) {
    ASSERT_TRUE(row["status"] == "ok");
    EXPECT_EQ(row["rounds"]["count"].get<int>(), 20);
    EXPECT_EQ(row["rounds"]["medians_ms"].size(), std::size_t(20));
    EXPECT_TRUE(row["rounds"]["spread"].get<double>() > 0.002);  // placements really moved the rounds
    EXPECT_TRUE(row.contains("noise_met"));
    EXPECT_TRUE(row["time_ms"]["samples"].get<int>() >= 100);  // every round's samples pooled
    EXPECT_EQ(row["rounds"]["kept"].get<int>(), 5);     // the fastest quarter
    EXPECT_TRUE(row["rounds"]["error"].get<double>() > 0);
  }
  EXPECT_EQ(r["settings"]["rounds"].get<int>(), 20);
}

TEST(GateRule, unchanged_runs_never_differ_with_rounds) {
  std::vector<json> runs;
  for (std::uint64_t p = 1; p <= 10; ++p) runs.push_back(simulated_run(100 + p, 20, 0));
  Tally t = compare_all(runs, runs, true);
  EXPECT_EQ(t.rows, 45 * 10);
  EXPECT_EQ(t.slower, 0);
  EXPECT_EQ(t.faster, 0);
  EXPECT_EQ(t.pairs_failing, 0);
}

TEST(GateRule, one_round_under_the_same_drift_cries_wolf) {
  // The control: without rounds the threshold-and-noise rule falls back to the within-run noise, which does
  // not see the placement drift, so confident wrong verdicts appear (compare's one-round allowance turned
  // off, the rule before issue 49). If this ever passes clean, the drift model is too weak to test anything.
  std::vector<json> runs;
  for (std::uint64_t p = 1; p <= 10; ++p) runs.push_back(simulated_run(100 + p, 1, 0));
  CompareOptions no_allowance;
  no_allowance.one_round_allowance = 0;
  Tally t = compare_all(runs, runs, true, no_allowance);
  EXPECT_TRUE(t.slower + t.faster > 0);
  // compare as it ships: a one-round change within kOneRoundAllowance is ambiguous, never slower or faster,
  // so the same one-round runs give no false alarm (issue 49).
  Tally d = compare_all(runs, runs, true);
  EXPECT_EQ(d.rows, 45 * 10);
  EXPECT_EQ(d.slower, 0);
  EXPECT_EQ(d.faster, 0);
  EXPECT_EQ(d.pairs_failing, 0);
  EXPECT_TRUE(d.ambiguous >= t.slower + t.faster);
}

TEST(GateRule, slowdowns_are_caught) {
  std::vector<json> base;
  for (std::uint64_t p = 1; p <= 10; ++p) base.push_back(simulated_run(200 + p, 20, 0));
  for (double level : {0.05, 0.10}) {
    std::vector<json> slowed;
    for (std::uint64_t p = 1; p <= 3; ++p) slowed.push_back(simulated_run(300 + p + static_cast<std::uint64_t>(level * 1000), 20, level));
    for (const json& s : slowed)
      for (const json& row : s["results"]) {
        ASSERT_TRUE(row.contains("injected_slowdown"));
        EXPECT_NEAR(row["injected_slowdown"]["fraction"].get<double>(), level, 1e-12);
      }
    Tally t = compare_all(base, slowed, false);
    EXPECT_EQ(t.rows, 10 * 3 * 10);
    double rate = static_cast<double>(t.slower) / t.rows;
    std::printf("injected %.0f%%: %d of %d (pair, row) caught (%.1f%%), %d ambiguous\n", level * 100, t.slower, t.rows,
                rate * 100, t.ambiguous);
    EXPECT_TRUE(rate >= (level >= 0.10 ? 1.0 : 0.95));
    EXPECT_EQ(t.faster, 0);
  }
}


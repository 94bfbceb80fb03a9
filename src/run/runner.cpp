// Grid runner implementation: inputs, reference, and the per-strategy pipeline, each strategy run through a
// StrategySession (run/strategy_session.hpp) for error isolation and device recovery.
#include "run/runner.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/fault_injection.hpp"
#include "core/problem_axes.hpp"
#include "core/reference.hpp"
#include "core/stop_request.hpp"
#include "measure/progress.hpp"
#include "measure/rounds.hpp"
#include "run/launch_summary.hpp"
#include "run/memory_estimate.hpp"
#include "run/problem_inputs.hpp"
#include "run/strategy_session.hpp"
#include "strategies/registry.hpp"
#include "core/phase_trace.hpp"

namespace ab {

namespace {

// Where a configuration came from: the fused tile's source, else the last plan not chosen by the heuristic.
std::string config_source(const RowConfig& c) {
  std::string src = "heuristic";
  for (const GemmPlanChoice& g : c.gemm_algos)
    if (g.source != "heuristic") src = g.source;
  if (c.strategy.tile) src = c.strategy.tile_source;
  return src;
}

// A strategy whose first round timed, waiting for its further rounds.
struct PendingRow {
  std::size_t result = 0;    // index into the rows
  std::size_t strategy = 0;  // index into the strategies
  StrategyOptions options;
  // Injected slowdown (test hook): the delay kernel runs after every forward when `slowed`, even with a
  // delay of 0 ms, since the calibration counted that kernel's own launch.
  bool slowed = false;
  double delay_ms = 0;
  std::vector<Measurement> rounds;
  bool failed = false;
};

// A problem whose strategies wait for rounds 2..R (its inputs drawn again from the seed each round).
struct PendingProblem {
  std::size_t index = 0;
  std::size_t row_begin = 0, row_end = 0;  // the problem's rows in rows_
  bool complete = true;                     // false: its last strategies went to a fresh process
  std::uint64_t seed = 0;
  std::vector<PendingRow> rows;
};

// The timed forward: the strategy's run, plus the injected delay when the test hook asks for one.
std::function<void()> timed_forward(Strategy& st, Backend& be, const PendingRow& pr) {
  if (!pr.slowed) return [&st, &be] { st.run(be); };
  return [&st, &be, delay_ms = pr.delay_ms] {
    st.run(be);
    be.profiler().enqueue_delay(delay_ms);
  };
}

RowVerification verification(const Backend& be, const Problem& p, const ErrorStats& e) {
  RowVerification v;
  v.reference = be.verifier().reference_name();
  v.max_abs_err = e.max_abs;
  v.rel_l2_err = e.rel_l2;
  v.tolerance = tolerance_for(p.dtype);
  v.nonfinite = e.nonfinite;
  v.passed = verify_failure(p, e).empty();
  return v;
}

// The run's memory limit, once the grid is known to fit in it (refused before anything is allocated).
std::int64_t checked_memory_limit(Backend& be, const RunOptions& opt, const DeviceInfo& dev) {
  std::int64_t limit = memory_limit(dev, opt.max_memory);
  check_memory_or_throw(be, opt.problems, opt.verify, limit);
  return limit;
}

// One problem's state during its first round.
struct ProblemRun {
  std::size_t index = 0;
  const Problem* problem = nullptr;
  std::unique_ptr<ProblemWorkspace> workspace;
  std::string input_error;  // set: every remaining strategy of the problem fails with it
  bool context_lost = false;
  std::int64_t used = 0;    // bytes the inputs take, for the workspace estimate
  std::size_t row_begin = 0;  // its first row in rows_
  std::vector<PendingRow> pending;
};

// The whole run: first round problem by problem, then rounds 2..R round the grid, then timing into rows.
class GridRun {
 public:
  GridRun(Backend& be, const RunOptions& opt, std::vector<std::string>* warnings, ResumePoint* resume)
      : be_(be), opt_(opt), warnings_(warnings), resume_(resume), dev_(be.device_info()),
        limit_(checked_memory_limit(be, opt, dev_)), strategies_(make_strategies(opt.strategies)),
        progress_(included_count(opt), opt.quiet) {}

  std::vector<ResultRow> run() {
    bool handed_off = false;
    const std::size_t end = std::min(opt_.end_problem, opt_.problems.size());
    for (std::size_t pi = opt_.start_problem; pi < end && !handed_off && !stop_requested(); ++pi)
      if (included(pi)) handed_off = !run_problem(pi);
    if (!handed_off) run_later_rounds();
    write_all_timing();
    progress_.finish();
    return std::move(rows_);
  }

 private:
  static std::int64_t included_count(const RunOptions& opt) {
    std::int64_t n = 0;
    for (std::size_t pi = opt.start_problem; pi < opt.problems.size(); ++pi) n += !opt.include || opt.include(pi);
    return n;
  }
  bool included(std::size_t pi) const { return !opt_.include || opt_.include(pi); }
  void problem_done(std::size_t pi, std::size_t begin, std::size_t end) const {
    if (opt_.problem_done) opt_.problem_done(pi, std::vector<ResultRow>(rows_.begin() + begin, rows_.begin() + end));
  }
  // The first round of problem `pi`; false when the rest of the grid goes to a fresh process or a stop was
  // requested.
  bool run_problem(std::size_t pi);
  ProblemWorkspace::Make first_round_inputs(ProblemRun& pr);
  // Strategy `si` on the problem; false when the context was lost and the rest goes to a fresh process.
  bool run_strategy(ProblemRun& pr, std::size_t si);
  std::optional<std::string> refusal(ProblemRun& pr, Strategy& st, StrategyOptions* sopt);
  void first_round_body(ProblemRun& pr, std::size_t si, StrategySession& session, const StrategyOptions& sopt,
                        ResultRow& row);
  bool after_failure(ProblemRun& pr, std::size_t si, const SessionFailure& f, ResultRow& row);
  void hand_off(ProblemRun& pr, std::size_t problem, std::size_t strategy);
  ResultRow base_row(const Problem& p, const Strategy& st) const;
  void finish(ResultRow row, Disposition d, const std::string& reason);

  void run_later_rounds();
  bool run_round(PendingProblem& pp, int r);
  bool prepare_round(PendingProblem& pp, int r, ProblemWorkspace& ws);
  void fail(PendingRow& pr, const std::string& why);
  void fail_rest(PendingProblem& pp, const std::string& why);
  void write_timing(const PendingRow& pr, const Problem& p);
  void write_all_timing();

  Backend& be_;
  const RunOptions& opt_;
  std::vector<std::string>* warnings_;
  ResumePoint* resume_;
  DeviceInfo dev_;
  std::int64_t limit_;
  std::vector<std::unique_ptr<Strategy>> strategies_;
  Progress progress_;
  std::vector<ResultRow> rows_;
  std::vector<PendingProblem> waiting_;  // problems whose strategies wait for rounds 2..R
  std::int64_t points_begun_ = 0;  // progress line position (skipped problems not counted)
};

ProblemWorkspace::Make GridRun::first_round_inputs(ProblemRun& pr) {
  return [this, &pr]() -> std::unique_ptr<ProblemInputs> {
    const Problem& p = *pr.problem;
    return std::make_unique<ProblemInputs>(be_, p, opt_.seed + pr.index, opt_.verify);
  };
}

bool GridRun::run_problem(std::size_t pi) {
  ProblemRun pr;
  pr.index = pi;
  pr.problem = &opt_.problems[pi];
  const Problem& p = *pr.problem;
  progress_.begin_point(points_begun_++, p.label());
  if (phase_trace_enabled()) trace_phase(fmt::format("run: problem {} begins", pi));
  const std::size_t row_begin = pr.row_begin = rows_.size();
  ScopedRange problem_range(be_.profiler(), p.label());
  pr.workspace = std::make_unique<ProblemWorkspace>(be_, first_round_inputs(pr));
  const bool prepared = pr.workspace->prepare();
  if (phase_trace_enabled()) trace_phase(fmt::format("run: problem {}: inputs ready", pi));
  if (!prepared) {
    pr.input_error = fmt::format("preparing inputs/reference failed: {}", pr.workspace->error());
    pr.context_lost = pr.workspace->device_lost();
  }
  pr.used = input_bytes(be_, p, opt_.verify);
  if (opt_.measure.rounds > 1) pr.used += DeviceMemory::kMaxRelocationSpacerBytes;  // later rounds' spacer
  for (std::size_t si = 0; si < strategies_.size(); ++si) {
    if (pi == opt_.start_problem && si < opt_.start_strategy) continue;
    if (!run_strategy(pr, si)) return false;
    if (stop_requested()) return false;  // the problem is unfinished: its rows are not passed on
  }
  if (opt_.measure.rounds == 1 || pr.pending.empty()) {
    // Final now (one round): its timing written and the problem passed on as it finishes.
    for (const PendingRow& row : pr.pending) write_timing(row, p);
    problem_done(pi, row_begin, rows_.size());
  } else {
    waiting_.push_back({pi, row_begin, rows_.size(), true, opt_.seed + pi, std::move(pr.pending)});
  }
  progress_.end_point();
  if (pr.context_lost && resume_ && pi + 1 < opt_.problems.size()) {
    // Every row of this problem is recorded as failed; the next problems need a fresh process.
    resume_->needed = true;
    resume_->problem = pi + 1;
    resume_->strategy = 0;
    return false;
  }
  return true;
}

ResultRow GridRun::base_row(const Problem& p, const Strategy& st) const {
  ResultRow row;
  row.problem = p;
  row.strategy = st.name();
  row.library_version = st.library_version();
  row.launches = summarize_launches(st.contract(p, opt_.strategy), std::nullopt);
  return row;
}

void GridRun::finish(ResultRow row, Disposition d, const std::string& reason) {
  row.disposition = d;
  row.reason = reason;
  rows_.push_back(std::move(row));
}

// Why strategy `st` does not run on the problem (inputs failed, cannot implement, no room), or nullopt;
// picks the cached configuration (fused tile, plugin configuration) into `sopt` on the way.
std::optional<std::string> GridRun::refusal(ProblemRun& pr, Strategy& st, StrategyOptions* sopt) {
  const Problem& p = *pr.problem;
  if (!pr.input_error.empty()) return pr.input_error;
  FusedTile cached;
  if (st.uses_fused_tile() && sopt->config.empty() && opt_.cached_tile && opt_.cached_tile(p, &cached)) {
    // A cached tile that cannot take this problem (another build's tile list) falls back to the default.
    if (be_.kernels().fused_can_implement(p, cached).empty()) {
      sopt->config = cached.name();
    } else if (warnings_) {
      warnings_->push_back(fmt::format("{}: cached fused tile {} cannot run it; using the default tile", p.label(), cached.name()));
    }
  }
  std::string cached_config;
  if (st.runs_isolated() && sopt->config.empty() && opt_.cached_plugin_config &&
      opt_.cached_plugin_config(p, st.name(), &cached_config))
    sopt->config = cached_config;
  std::string why = st.can_run(p, be_, *sopt);
  if (why.empty()) why = workspace_refusal(pr.used, st.workspace_bytes(p, *sopt), limit_);
  if (why.empty()) return std::nullopt;
  return why;
}

bool GridRun::run_strategy(ProblemRun& pr, std::size_t si) {
  Strategy& st = *strategies_[si];
  if (st.runs_isolated() && opt_.isolated_rows) {
    for (ResultRow& r : opt_.isolated_rows(pr.index, *pr.problem, st)) rows_.push_back(std::move(r));
    return true;
  }
  ResultRow row = base_row(*pr.problem, st);
  StrategyOptions sopt = strategy_options(opt_, st);
  if (auto why = refusal(pr, st, &sopt)) {
    finish(std::move(row), pr.input_error.empty() ? Disposition::unsupported : Disposition::failed, *why);
    return true;
  }
  ScopedRange strategy_range(be_.profiler(), st.name());
  StrategySession session(be_, st, *pr.workspace);
  auto failure = session.run([&] { first_round_body(pr, si, session, sopt, row); });
  if (failure) return after_failure(pr, si, *failure, row);
  return true;
}

// Set up, one poisoned and launch-counted forward (verified with --verify), the injected slowdown's
// calibration, the first round's timing, teardown. Records the row (ok or incorrect).
void GridRun::first_round_body(ProblemRun& pr, std::size_t si, StrategySession& session, const StrategyOptions& sopt,
                               ResultRow& row) {
  Strategy& st = session.strategy();
  const Problem& p = *pr.problem;
  const bool config_from_cache = sopt.config != strategy_options(opt_, st).config;
  {
    ScopedRange r(be_.profiler(), "setup");
    session.setup(p, sopt);
  }
  RowConfig cfg{st.config(), be_.gemm().plan_report(), ""};
  if (config_from_cache && cfg.strategy.tile) cfg.strategy.tile_source = "cache";
  cfg.source = config_source(cfg);
  if (config_from_cache) cfg.source = "cache";
  row.config = std::move(cfg);
  session.inputs().poison_output();
  std::optional<LaunchRecord> rec;
  {
    ScopedRange r(be_.profiler(), opt_.profile ? "warm-up" : "verify forward");
    if (!opt_.profile) be_.profiler().begin_launch_count();  // CUPTI stays off under a profiler
    if (!opt_.inject_fault.empty() && opt_.inject_fault == st.name()) inject_fault(be_);
    st.run(be_);
    if (!opt_.profile) rec = be_.profiler().end_launch_count();
    else be_.memory().synchronize();
  }
  row.launches = summarize_launches(st.contract(p, opt_.strategy), rec);
  if (opt_.verify) {
    st.publish_output(be_);
    ErrorStats e = session.inputs().verify_output();
    row.verify = verification(be_, p, e);
    if (!row.verify->passed) {
      session.teardown();
      finish(std::move(row), Disposition::incorrect, verify_failure(p, e));
      return;
    }
  }
  if (opt_.profile) {
    {
      ScopedRange r(be_.profiler(), profile_range_name(p, st.name(), row.config->strategy.tile));
      st.run(be_);
      be_.memory().synchronize();
    }
    session.teardown();
    finish(std::move(row), Disposition::ok, "");
    return;
  }
  PendingRow pending;
  pending.strategy = si;
  pending.options = sopt;
  if (double fraction = slowdown_for(opt_.slowdown, st.name()); fraction > 0) {
    ScopedRange r(be_.profiler(), "calibrate injected slowdown");
    InjectedDelay d = calibrate_delay(timed_device(be_), [&] { st.run(be_); }, fraction, opt_.measure);
    pending.slowed = true;
    pending.delay_ms = d.delay_ms;
    row.injected_slowdown = InjectedSlowdown{d.fraction, d.delay_ms, d.base_ms, d.achieved};
  }
  {
    ScopedRange r(be_.profiler(), "measure");
    pending.rounds.push_back(measure_forward(be_, timed_forward(st, be_, pending), opt_.measure));
  }
  session.teardown();
  pending.result = rows_.size();
  pr.pending.push_back(std::move(pending));
  finish(std::move(row), Disposition::ok, "");
}

// Records a failed or unsupported row; after a device error rebuilds the inputs, or (the device lost, with a
// resume point) hands the rest of the grid to a fresh process and returns false.
bool GridRun::after_failure(ProblemRun& pr, std::size_t si, const SessionFailure& f, ResultRow& row) {
  if (f.unsupported) {
    finish(std::move(row), Disposition::unsupported, f.what);
    return true;
  }
  std::string msg = fmt::format("{} / {}: {}", pr.problem->label(), strategies_[si]->name(), f.what);
  if (f.sticky && f.context_lost && resume_) {
    finish(std::move(row), Disposition::failed, msg);
    bool more = si + 1 < strategies_.size();
    hand_off(pr, more ? pr.index : pr.index + 1, more ? si + 1 : 0);
    return false;
  }
  if (f.sticky && f.context_lost) {
    pr.input_error = "the device could not be recovered after an earlier error";
  } else if (f.sticky && !pr.workspace->prepare()) {
    pr.input_error = fmt::format("re-preparing inputs after a device error failed: {}", pr.workspace->error());
  }
  finish(std::move(row), Disposition::failed, msg);
  return true;
}

// The device could not be rebuilt: the rest of the grid, from (problem, strategy), goes to a fresh process;
// what timed before the error keeps the rounds it has.
void GridRun::hand_off(ProblemRun& pr, std::size_t problem, std::size_t strategy) {
  resume_->problem = problem;
  resume_->strategy = strategy;
  resume_->needed = problem < opt_.problems.size();  // nothing left: no fresh process
  const bool complete = problem > pr.index;  // its remaining strategies, if any, run in the fresh process
  waiting_.push_back({pr.index, pr.row_begin, rows_.size(), complete, opt_.seed + pr.index, std::move(pr.pending)});
}

// Rounds 2..R go round the whole grid, so each row's rounds spread over the run: on an H200 a problem's
// speed drifts by 1-2% over seconds, and rounds taken back to back would all share one drift.
void GridRun::run_later_rounds() {
  if (resume_ && resume_->needed) return;
  for (int r = 1; r < opt_.measure.rounds; ++r)
    for (std::size_t k = 0; k < waiting_.size(); ++k) {
      if (stop_requested()) return;
      PendingProblem& pp = waiting_[(k + static_cast<std::size_t>(r)) % waiting_.size()];
      ScopedRange range(be_.profiler(), fmt::format("{} round {}", opt_.problems[pp.index].label(), r + 1));
      if (run_round(pp, r)) continue;
      if (warnings_) warnings_->push_back(fmt::format("a device error in round {} ended the rounds; rows keep the rounds they finished", r + 1));
      return;
    }
}

void GridRun::fail(PendingRow& pr, const std::string& why) {
  pr.failed = true;
  rows_[pr.result].disposition = Disposition::failed;
  rows_[pr.result].reason = why;
}

void GridRun::fail_rest(PendingProblem& pp, const std::string& why) {
  for (PendingRow& pr : pp.rows)
    if (!pr.failed) fail(pr, why);
}

// Fresh placement and the inputs uploaded again; false (every row failed) when that failed.
bool GridRun::prepare_round(PendingProblem& pp, int r, ProblemWorkspace& ws) {
  std::string error;
  bool sticky = false;
  try {
    be_.memory().relocate_buffers(pp.seed * 1000003u + static_cast<std::uint64_t>(r));
  } catch (const BackendError& e) {
    error = e.what();
    sticky = e.sticky;
    if (sticky) ws.recover_device();
  }
  if (error.empty() && !ws.prepare()) error = ws.error();
  if (error.empty()) return true;
  fail_rest(pp, fmt::format("round {}: preparing inputs failed: {}", r + 1, error));
  return false;
}

// Round r (1-based after the first) of one problem: every pending strategy set up, timed and torn down, in
// an order rotated each round. A failure marks its row failed. Returns false when a device error left the
// context unusable.
bool GridRun::run_round(PendingProblem& pp, int r) {
  const Problem& p = opt_.problems[pp.index];
  ProblemWorkspace ws(be_, [&]() {
    return std::make_unique<ProblemInputs>(be_, p, pp.seed, false);
  });
  if (!prepare_round(pp, r, ws)) return !ws.device_lost();
  for (std::size_t k = 0; k < pp.rows.size(); ++k) {
    PendingRow& pr = pp.rows[(k + static_cast<std::size_t>(r)) % pp.rows.size()];
    if (pr.failed) continue;
    Strategy& st = *strategies_[pr.strategy];
    StrategySession session(be_, st, ws);
    auto failure = session.run([&] {
      ScopedRange range(be_.profiler(), fmt::format("{} round {}", st.name(), r + 1));
      session.setup(p, pr.options);
      pr.rounds.push_back(measure_forward(be_, timed_forward(st, be_, pr), opt_.measure));
      session.teardown();
    });
    if (!failure) continue;
    fail(pr, fmt::format("{} / {}: round {}: {}", p.label(), st.name(), r + 1, failure->what));
    if (!failure->sticky) continue;
    if (failure->context_lost) {
      fail_rest(pp, "the device could not be recovered after an error in a later round");
      return false;
    }
    if (!ws.prepare()) {
      fail_rest(pp, fmt::format("re-preparing inputs after a device error failed: {}", ws.error()));
      return true;
    }
  }
  return true;
}

// The row's timing from its rounds, its rates from the center, and the rounds' warnings.
void GridRun::write_timing(const PendingRow& pr, const Problem& p) {
  ResultRow& row = rows_[pr.result];
  row.timing = combine_rounds(pr.rounds, opt_.measure, dev_.clock_mhz_max);
  double sec = row.timing->time_ms.median * 1e-3;
  row.tflops = sec > 0 ? p.flops() / sec * 1e-12 : 0.0;
  row.gbps = sec > 0 ? p.bytes() / sec * 1e-9 : 0.0;
  row.copy_fraction = sec > 0 && dev_.copy_bandwidth_gbps > 0 ? row.gbps / dev_.copy_bandwidth_gbps : NAN;
  if (!warnings_) return;
  for (const Measurement& m : pr.rounds)
    for (const auto& w : m.warnings) {
      std::string msg = fmt::format("{} / {}: {}", p.label(), row.strategy, w);
      if (std::find(warnings_->begin(), warnings_->end(), msg) == warnings_->end()) warnings_->push_back(msg);
    }
}

void GridRun::write_all_timing() {
  for (const PendingProblem& pp : waiting_)
    for (const PendingRow& pr : pp.rows)
      if (!pr.failed) write_timing(pr, opt_.problems[pp.index]);
  if (stop_requested()) return;  // their rounds are unfinished
  for (const PendingProblem& pp : waiting_)
    if (pp.complete) problem_done(pp.index, pp.row_begin, pp.row_end);
}

}  // namespace

std::string profile_range_name(const Problem& p, const std::string& strategy, const std::optional<FusedTile>& tile) {
  std::string name = "profile " + p.label() + " " + strategy + (tile ? " " + tile->name() : "");
  for (char& c : name)
    if (c == '/' || c == '@' || c == '[' || c == ']') c = '_';
  return name;
}

StrategyOptions strategy_options(const RunOptions& opt, const Strategy& st) {
  StrategyOptions o = opt.strategy;
  if (st.uses_fused_tile() && opt.tile) o.config = opt.tile->name();
  if (st.runs_isolated()) o.config = opt.plugin_config;
  return o;
}

std::vector<ResultRow> run_grid_rows(Backend& be, const RunOptions& opt, std::vector<std::string>* warnings,
                                     ResumePoint* resume) {
  return GridRun(be, opt, warnings, resume).run();
}

}  // namespace ab

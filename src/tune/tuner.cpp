// The tuning loop over problems and strategies. Each (problem, strategy) runs through a StrategySession
// (run/strategy_session.hpp), as in the runner: after a device error that loses the context, the device is
// recovered, the inputs are rebuilt and the strategy retried with the crashing candidate skipped.
#include "tune/tuner.hpp"

#include <chrono>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "core/phase_trace.hpp"
#include "core/errors.hpp"
#include "core/stop_request.hpp"
#include "measure/progress.hpp"
#include "run/memory_estimate.hpp"
#include "run/problem_inputs.hpp"
#include "run/strategy_session.hpp"
#include "tune/fused_search.hpp"
#include "tune/gemm_search.hpp"
#include "tune/plan_recorder.hpp"
#include "tune/tune_records.hpp"
#include "strategies/registry.hpp"

namespace ab {

namespace {

constexpr int kAttempts = 3;  // per (problem, strategy), counting retries after a lost device context

void add_entries(TuneOutcome& out, const TuneOptions& opt, const std::string& stamp) {
  for (const GemmTuneRecord& r : out.gemm)
    if (r.best >= 0) out.cache.put_gemm(make_gemm_entry(r, out.env, opt, stamp));
  for (const FusedTuneRecord& r : out.fused)
    if (r.best >= 0) out.cache.put_fused(make_fused_entry(r, out.env, stamp));
  for (const PluginTuneRecord& r : out.plugins)
    if (r.best >= 0) out.cache.put_plugin(make_plugin_entry(r, out.env, stamp));
}

// The search over the grid; one object per tune_grid call.
class TuneRun {
 public:
  TuneRun(Backend& be, const TuneOptions& opt)
      : be_(be), opt_(opt), strategies_(make_strategies(opt.strategies)),
        limit_(memory_limit(be.device_info(), opt.max_memory)),
        progress_(included_count(opt) * static_cast<std::int64_t>(strategies_.size()), opt.quiet) {}

  TuneOutcome run(const std::string& stamp) {
    out_.dry_run = opt_.dry_run;
    out_.env = CacheEnvironment::from_device(be_.device_info());
    out_.cache.add_environment(out_.env);
    be_.gemm().set_chooser(nullptr);
    stamp_ = stamp;
    GemmSearchState search{opt_, out_, {}, {}, [this] { checkpoint(); }, &crashed_};
    if (!opt_.quiet) search.message = [this](const std::string& m) { progress_.message(m); };
    search_ = &search;
    std::int64_t point = 0;
    for (std::size_t pi = 0; pi < opt_.problems.size() && !stop_requested(); ++pi) {
      if (opt_.include && !opt_.include(pi)) continue;
      ProblemWorkspace ws(be_, [&, pi] { return std::make_unique<ProblemInputs>(be_, opt_.problems[pi], opt_.seed + pi); });
      std::string input_error = prepare(ws, opt_.problems[pi]);
      trace_phase(fmt::format("tune: problem {}: inputs and reference ready", pi));
      for (auto& st : strategies_) {
        if (stop_requested()) break;
        progress_.begin_point(point++, fmt::format("{} / {}", opt_.problems[pi].label(), st->name()));
        if (st->runs_isolated()) tune_plugin(pi, opt_.problems[pi], *st);
        else tune_strategy(ws, opt_.problems[pi], *st, input_error);
        progress_.end_point();
      }
      if (!stop_requested() && opt_.problem_done) opt_.problem_done(pi);
    }
    progress_.finish();
    return std::move(out_);
  }

 private:
  // Builds the problem's inputs; "" or the note that every strategy of the problem gets instead.
  std::string prepare(ProblemWorkspace& ws, const Problem& p) {
    if (ws.prepare()) return "";
    return fmt::format("{}: preparing inputs/reference failed: {}{}", p.label(), ws.error(),
                       ws.device_lost() ? " (device not recoverable)" : "");
  }
  void note(const std::string& m) {
    out_.notes.push_back(m);
    if (!opt_.quiet) progress_.message(m);
  }
  static std::int64_t included_count(const TuneOptions& opt) {
    std::int64_t n = 0;
    for (std::size_t pi = 0; pi < opt.problems.size(); ++pi) n += !opt.include || opt.include(pi);
    return n;
  }
  void checkpoint() {
    if (stop_requested()) return;  // measured after the stop request: cut short, not kept
    add_entries(out_, opt_, stamp_);
    if (opt_.checkpoint) opt_.checkpoint(out_.cache);
  }
  void tune_strategy(ProblemWorkspace& ws, const Problem& p, Strategy& st, std::string& input_error);
  void tune_plugin(std::size_t index, const Problem& p, Strategy& st);
  void tune_fused(ProblemWorkspace& ws, const Problem& p, Strategy& st);
  void tune_gemms(StrategySession& session, PlanRecorder& rec, const Problem& p, Strategy& st);

  Backend& be_;
  const TuneOptions& opt_;
  std::vector<std::unique_ptr<Strategy>> strategies_;
  std::int64_t limit_;
  Progress progress_;
  TuneOutcome out_;
  std::string stamp_;
  std::set<std::string> crashed_;
  GemmSearchState* search_ = nullptr;
};

// Up to kAttempts tries of one strategy: a lost device context is recovered, the inputs rebuilt, and the
// strategy tried again with the crashing candidate skipped.
void TuneRun::tune_strategy(ProblemWorkspace& ws, const Problem& p, Strategy& st, std::string& input_error) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (!input_error.empty()) {
      out_.failed_strategies++;
      note(input_error);
      return;
    }
    PlanRecorder rec(be_);
    StrategySession session(be_, st, ws, /*propagate_usage_errors=*/true);  // bad settings, unwritable cache: stop
    auto failure = session.run([&] {
      if (st.uses_fused_tile()) tune_fused(ws, p, st);
      else tune_gemms(session, rec, p, st);
    });
    if (!failure) return;
    if (failure->unsupported) {
      note(fmt::format("{} / {}: unsupported: {}", p.label(), st.name(), failure->what));
      return;
    }
    if (!failure->sticky) {
      out_.failed_strategies++;
      note(fmt::format("{} / {}: failed: {}", p.label(), st.name(), failure->what));
      return;
    }
    // The session recovered the device (or could not): rebuild the inputs and retry.
    input_error = failure->context_lost ? "the device could not be recovered after an earlier error" : prepare(ws, p);
    bool last = attempt + 1 == kAttempts || !input_error.empty();
    note(fmt::format("{} / {}: device error: {}{}", p.label(), st.name(), failure->what,
                     last ? "" : "; retrying without that candidate"));
    if (last) {
      out_.failed_strategies++;
      return;
    }
  }
}

// A plugin's configurations on one problem, each a trial of its own (opt_.plugin_trial); the fastest
// verified one wins. Listed only with --dry_run.
void TuneRun::tune_plugin(std::size_t index, const Problem& p, Strategy& st) {
  std::vector<std::string> configs = st.tunable_configs();
  if (opt_.dry_run) {
    if (!opt_.quiet) progress_.message(fmt::format("  {} {}: {} configurations", st.name(), p.label(), configs.size()));
    return;
  }
  if (!opt_.plugin_trial) {
    note(fmt::format("{} / {}: not tuned (plugins are tuned through the attnbench binary)", p.label(), st.name()));
    return;
  }
  PluginTuneRecord r;
  r.problem = p;
  r.strategy = st.name();
  for (std::size_t i = 0; i < configs.size(); ++i) {
    ResultRow row = opt_.plugin_trial(index, p, st, configs[i]);
    CandidateOutcome c;
    c.label = configs[i];
    c.baseline = i == 0;
    c.status = to_string(row.disposition);
    c.reason = row.reason;
    if (row.disposition == Disposition::ok && row.timing) {
      c.ms = row.timing->time_ms.median;
      c.noise = row.timing->time_ms.noise;
      if (r.best < 0 || c.ms < r.candidates[static_cast<std::size_t>(r.best)].ms) r.best = static_cast<int>(i);
    }
    r.candidates.push_back(c);
  }
  if (r.candidates.front().status == "unsupported" && r.best < 0) {
    note(fmt::format("{} / {}: unsupported: {}", p.label(), st.name(), r.candidates.front().reason));
    return;
  }
  if (r.best < 0) {
    out_.failed_strategies++;
    note(fmt::format("{} / {}: none of {} configurations passed (first: {})", p.label(), st.name(), configs.size(),
                     r.candidates.front().reason));
  } else if (!opt_.quiet) {
    progress_.message(fmt::format("  {} {}: {} configurations, best {} {:.4f} ms", st.name(), p.label(), configs.size(),
                                  r.candidates[static_cast<std::size_t>(r.best)].label, r.best_ms()));
  }
  out_.plugins.push_back(std::move(r));
  checkpoint();
}

// The fused kernel's tiles on one problem (listed only, with --dry_run).
void TuneRun::tune_fused(ProblemWorkspace& ws, const Problem& p, Strategy& st) {
  if (opt_.skip_cached && opt_.skip_cached->find_fused(p, out_.env)) return;
  std::string why;
  FusedTuneRecord r = opt_.dry_run ? list_fused_tiles(be_, st, p, opt_, &why)
                                   : tune_fused_tiles(be_, st, p, ws.inputs(), opt_, &why, &crashed_);
  if (r.tiles.empty()) {
    note(fmt::format("{} / {}: unsupported: {}", p.label(), st.name(), why));
    return;
  }
  if (opt_.dry_run) {
    if (!opt_.quiet) progress_.message(fmt::format("  fused {}: {} tiles", p.label(), r.tiles.size()));
  } else if (r.best < 0) {
    note(fmt::format("{} / fused: none of {} tiles passed (first: {})", p.label(), r.tiles.size(),
                     r.candidates.front().reason));
  } else if (!opt_.quiet) {
    progress_.message(fmt::format("  fused {}: {} tiles, best {} {:.4f} ms, gain {:.3f}x", p.label(), r.tiles.size(),
                                  r.candidates[r.best].label, r.best_ms(), r.gain()));
  }
  out_.fused.push_back(std::move(r));
  if (!opt_.dry_run) checkpoint();
}

// The GEMMs of a strategy set up on the recorder (listed only, with --dry_run).
void TuneRun::tune_gemms(StrategySession& session, PlanRecorder& rec, const Problem& p, Strategy& st) {
  std::string why = st.can_run(p, be_, opt_.strategy);
  if (why.empty()) why = workspace_refusal(input_bytes(be_, p, true), st.workspace_bytes(p, opt_.strategy), limit_);
  if (!why.empty()) {
    note(fmt::format("{} / {}: unsupported: {}", p.label(), st.name(), why));
    return;
  }
  session.setup(rec, p, opt_.strategy);
  trace_phase(fmt::format("tune: {}: {} plans set up", st.name(), rec.plans().size()));
  if (!rec.plans().empty()) {
    if (opt_.dry_run) list_strategy_gemm_candidates(*search_, rec, st, p);
    else tune_strategy_gemms(*search_, rec, st, p, session.inputs());
  }
  session.teardown();
  trace_phase(fmt::format("tune: {}: done", st.name()));
}

}  // namespace

TuneOutcome tune_grid(Backend& be, const TuneOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  if (opt.top < 1) throw UsageError(fmt::format("--top must be at least 1, got {}", opt.top));
  validate_measure_settings(opt.measure);
  validate_measure_settings(opt.screen);
  (void)make_strategies(opt.strategies);  // unknown names fail before the memory check
  const std::int64_t limit = memory_limit(be.device_info(), opt.max_memory);
  check_memory_or_throw(be, opt.problems, true, limit);  // before anything is allocated, as run does
  TuneOutcome out = TuneRun(be, opt).run(utc_timestamp());
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace ab

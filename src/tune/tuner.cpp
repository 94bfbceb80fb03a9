// The tuning loop over problems and strategies, with error isolation and device recovery like the runner:
// after a device error that loses the context, the inputs are rebuilt and the strategy retried with the
// crashing candidate skipped.
#include "tune/tuner.hpp"

#include <chrono>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "measure/progress.hpp"
#include "tune/fused_search.hpp"
#include "tune/gemm_search.hpp"
#include "tune/plan_recorder.hpp"
#include "run/memory_estimate.hpp"
#include "run/problem_inputs.hpp"
#include "tune/tune_records.hpp"

namespace ab {

namespace {

constexpr int kAttempts = 3;  // per (problem, strategy), counting retries after a lost device context

void add_entries(TuneOutcome& out, const TuneOptions& opt, const std::string& stamp) {
  for (const GemmTuneRecord& r : out.gemm)
    if (r.best >= 0) out.cache.put_gemm(make_gemm_entry(r, out.env, opt, stamp));
  for (const FusedTuneRecord& r : out.fused)
    if (r.best >= 0) out.cache.put_fused(make_fused_entry(r, out.env, stamp));
}

}  // namespace

TuneOutcome tune_grid(Backend& be, const TuneOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  if (opt.top < 1) throw UsageError(fmt::format("--top must be at least 1, got {}", opt.top));
  validate_measure_settings(opt.measure);
  validate_measure_settings(opt.screen);
  auto strategies = make_strategies(opt.strategies);
  const std::int64_t limit = memory_limit(be.device_info(), opt.max_memory);
  check_memory_or_throw(be, opt.problems, true, limit);  // before anything is allocated, as run does

  TuneOutcome out;
  out.dry_run = opt.dry_run;
  out.env = CacheEnvironment::from_device(be.device_info());
  out.cache.add_environment(out.env);
  be.gemm().set_chooser(nullptr);
  const std::string stamp = utc_timestamp();
  std::set<std::string> crashed;

  Progress progress(static_cast<std::int64_t>(opt.problems.size() * strategies.size()), opt.quiet);
  auto note = [&](const std::string& m) {
    out.notes.push_back(m);
    if (!opt.quiet) progress.message(m);
  };
  auto checkpoint = [&] {
    add_entries(out, opt, stamp);
    if (opt.checkpoint) opt.checkpoint(out.cache);
  };
  GemmSearchState search{opt, out, {}, {}, checkpoint, &crashed};
  if (!opt.quiet) search.message = [&](const std::string& m) { progress.message(m); };

  std::int64_t point = 0;
  for (std::size_t pi = 0; pi < opt.problems.size(); ++pi) {
    const Problem& p = opt.problems[pi];
    std::unique_ptr<ProblemInputs> in;
    std::string input_error;
    auto prepare = [&]() {
      input_error.clear();
      try {
        in.reset();
        in = std::make_unique<ProblemInputs>(be, p, opt.seed + pi);
      } catch (const BackendError& e) {
        input_error = fmt::format("{}: preparing inputs/reference failed: {}", p.label(), e.what());
        if (e.sticky) {
          if (in) in->forget_device_memory();
          if (!be.recover()) input_error += " (device not recoverable)";
        }
      }
    };
    prepare();

    for (auto& st : strategies) {
      progress.begin_point(point++, fmt::format("{} / {}", p.label(), st->name()));
      const bool is_fused = st->uses_fused_tile();
      for (int attempt = 0; attempt < kAttempts; ++attempt) {
        if (!input_error.empty()) {
          out.failed_strategies++;
          note(input_error);
          break;
        }
        PlanRecorder rec(be);
        bool set_up = false;
        // After an error: tear down what was set up; a second error there changes nothing.
        auto teardown_quietly = [&] {
          try {
            if (set_up) st->teardown(rec);
          } catch (...) {
          }
        };
        try {
          if (is_fused) {
            if (opt.skip_cached && opt.skip_cached->find_fused(p, out.env)) break;
            std::string why;
            FusedTuneRecord r = opt.dry_run ? list_fused_tiles(be, *st, p, opt, &why)
                                            : tune_fused_tiles(be, *st, p, *in, opt, &why, &crashed);
            if (r.tiles.empty()) {
              note(fmt::format("{} / fused: unsupported: {}", p.label(), why));
            } else {
              if (opt.dry_run) {
                if (!opt.quiet) progress.message(fmt::format("  fused {}: {} tiles", p.label(), r.tiles.size()));
              } else if (r.best < 0)
                note(fmt::format("{} / fused: none of {} tiles passed (first: {})", p.label(), r.tiles.size(),
                                 r.candidates.front().reason));
              else if (!opt.quiet)
                progress.message(fmt::format("  fused {}: {} tiles, best {} {:.4f} ms, gain {:.3f}x", p.label(),
                                             r.tiles.size(), r.candidates[r.best].label, r.best_ms(), r.gain()));
              out.fused.push_back(std::move(r));
              if (!opt.dry_run) checkpoint();
            }
          } else {
            std::string why = st->can_implement(p, be, opt.strategy);
            if (why.empty())
              why = workspace_refusal(input_bytes(be, p, true), st->workspace_bytes(p, opt.strategy), limit);
            if (!why.empty()) {
              note(fmt::format("{} / {}: unsupported: {}", p.label(), st->name(), why));
            } else {
              st->setup(rec, p, in->io(), opt.strategy);
              set_up = true;
              if (!rec.plans().empty()) {
                if (opt.dry_run) list_strategy_gemm_candidates(search, rec, *st, p);
                else tune_strategy_gemms(search, rec, *st, p, *in);
              }
              set_up = false;
              st->teardown(rec);
            }
          }
          break;
        } catch (const UsageError&) {
          throw;  // bad settings, or the cache file can no longer be written: stop
        } catch (const UnsupportedError& e) {
          if (set_up) st->teardown(rec);
          note(fmt::format("{} / {}: unsupported: {}", p.label(), st->name(), e.what()));
          break;
        } catch (const BackendError& e) {
          if (!e.sticky) {
            teardown_quietly();
            out.failed_strategies++;
            note(fmt::format("{} / {}: failed: {}", p.label(), st->name(), e.what()));
            break;
          }
          // The context is gone: rebuild it and the inputs, then retry with the crashing candidate skipped.
          bool ok = be.recover();
          if (in) in->forget_device_memory();
          teardown_quietly();
          if (ok) prepare();
          else input_error = "the device could not be recovered after an earlier error";
          bool last = attempt + 1 == kAttempts || !input_error.empty();
          note(fmt::format("{} / {}: device error: {}{}", p.label(), st->name(), e.what(),
                           last ? "" : "; retrying without that candidate"));
          if (last) {
            out.failed_strategies++;
            break;
          }
        } catch (const std::exception& e) {
          teardown_quietly();
          out.failed_strategies++;
          note(fmt::format("{} / {}: failed: {}", p.label(), st->name(), e.what()));
          break;
        }
      }
      progress.end_point();
    }
  }
  progress.finish();
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace ab

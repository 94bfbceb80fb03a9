// Grid runner implementation: inputs, reference, and the per-strategy pipeline with error isolation.
#include "run/runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/reference.hpp"
#include "measure/progress.hpp"
#include "measure/rounds.hpp"
#include "run/memory_estimate.hpp"
#include "run/problem_inputs.hpp"

namespace ab {

namespace {

// Kernels named as cuBLASLt split-K reductions, counted from "name xN" entries.
std::int64_t splitk_reduction_kernels(const std::vector<std::string>& names) {
  std::int64_t n = 0;
  for (const std::string& s : names) {
    if (s.find("splitK") == std::string::npos && s.find("educe") == std::string::npos) continue;
    auto x = s.rfind(" x");
    n += x == std::string::npos ? 1 : std::atoll(s.c_str() + x + 2);
  }
  return n;
}

nlohmann::json launches_json(const LaunchContract& c, const std::optional<LaunchRecord>& r) {
  nlohmann::json j;
  j["expected"] = {{"gemm", c.gemm_calls}, {"kernels", c.kernels}, {"total", c.total()}, {"formula", c.formula}};
  if (r) {
    j["measured"] = {{"kernels", r->kernels},       {"gemm_calls", r->gemm_calls},
                     {"other_kernels", r->other_kernels}, {"kernel_names", r->kernel_names},
                     {"source", r->source}};
    // cuBLASLt may split one GEMM call into a split-K kernel plus a reduction; such extra kernels are
    // explained by their names and do not count as a broken contract.
    std::int64_t extra = r->kernels - c.total();
    std::int64_t reductions = splitk_reduction_kernels(r->kernel_names);
    j["match"] = extra == 0 || (extra > 0 && extra == reductions);
    if (extra > 0 && extra == reductions)
      j["explained"] = fmt::format("{} extra cuBLASLt split-K reduction kernel(s)", reductions);
  }
  return j;
}

std::string config_source(const nlohmann::json& gemm_report, const nlohmann::json& cfg) {
  std::string src = "heuristic";
  for (const auto& g : gemm_report)
    if (g.contains("source") && g["source"] != "heuristic") src = g["source"].get<std::string>();
  if (cfg.contains("tile_source")) src = cfg["tile_source"].get<std::string>();
  return src;
}

// A strategy whose first round timed, waiting for its further rounds.
struct PendingRow {
  std::size_t result = 0;    // index into the results array
  std::size_t strategy = 0;  // index into the strategies
  StrategyOptions options;
  // Injected slowdown (test hook): the delay kernel runs after every forward when `slowed`, even with a
  // delay of 0 ms, since the calibration counted that kernel's own launch.
  bool slowed = false;
  double delay_ms = 0;
  std::vector<Measurement> rounds;
  bool failed = false;
};

// A problem whose strategies wait for rounds 2..R, with its host inputs when they are kept (re-uploaded each
// round rather than drawn again).
struct PendingProblem {
  std::size_t index = 0;
  std::uint64_t seed = 0;
  std::shared_ptr<const HostTensors> host;  // null: draw them again from the seed
  std::vector<PendingRow> rows;
};

// Host inputs kept for later rounds only up to this many bytes in all; past it they are drawn again.
constexpr std::size_t kKeptHostInputBytes = std::size_t(2) << 30;

std::size_t host_bytes(const HostTensors& t) {
  return (t.q.size() + t.k.size() + t.v.size()) * sizeof(std::uint16_t) + t.block_table.size() * sizeof(std::int32_t);
}

// The timed forward: the strategy's run, plus the injected delay when the test hook asks for one.
std::function<void()> timed_forward(Strategy& st, Backend& be, const PendingRow& pr) {
  if (!pr.slowed) return [&st, &be] { st.run(be); };
  return [&st, &be, delay_ms = pr.delay_ms] {
    st.run(be);
    be.kernels().inject_delay(delay_ms);
  };
}

// The row's timing fields from its rounds, its rates from the center, and the rounds' warnings.
void write_timing(nlohmann::json& row, const PendingRow& pr, const Problem& p, const Strategy& st,
                  const MeasureSettings& s, int max_clock_mhz, std::vector<std::string>* warnings) {
  nlohmann::json t = rounds_to_json(pr.rounds, s, max_clock_mhz);
  for (auto it = t.begin(); it != t.end(); ++it) row[it.key()] = it.value();
  double sec = row["time_ms"]["median"].get<double>() * 1e-3;
  row["tflops"] = sec > 0 ? p.flops() / sec * 1e-12 : 0.0;
  row["gbps"] = sec > 0 ? p.bytes() / sec * 1e-9 : 0.0;
  if (!warnings) return;
  for (const Measurement& m : pr.rounds)
    for (const auto& w : m.warnings) {
      std::string msg = fmt::format("{} / {}: {}", p.label(), st.name(), w);
      if (std::find(warnings->begin(), warnings->end(), msg) == warnings->end()) warnings->push_back(msg);
    }
}

void write_all_timing(const std::vector<PendingProblem>& pending, const RunOptions& opt,
                      std::vector<std::unique_ptr<Strategy>>& strategies, int max_clock_mhz, nlohmann::json& results,
                      std::vector<std::string>* warnings) {
  for (const PendingProblem& pp : pending)
    for (const PendingRow& pr : pp.rows)
      if (!pr.failed)
        write_timing(results[pr.result], pr, opt.problems[pp.index], *strategies[pr.strategy], opt.measure,
                     max_clock_mhz, warnings);
}

// Round r (1-based after the first) of one problem: fresh placement, the inputs uploaded again, and every
// pending strategy set up, timed and torn down, in an order rotated each round. A failure marks its row
// failed. Returns false when a device error left the context unusable.
bool run_round(Backend& be, PendingProblem& pp, int r, const RunOptions& opt,
               std::vector<std::unique_ptr<Strategy>>& strategies, nlohmann::json& results) {
  const Problem& p = opt.problems[pp.index];
  auto fail = [&](PendingRow& pr, const std::string& why) {
    pr.failed = true;
    results[pr.result]["status"] = "failed";
    results[pr.result]["reason"] = why;
  };
  auto fail_rest = [&](const std::string& why) {
    for (PendingRow& pr : pp.rows)
      if (!pr.failed) fail(pr, why);
  };
  std::unique_ptr<ProblemInputs> in;
  auto prepare = [&] {
    in = pp.host ? std::make_unique<ProblemInputs>(be, p, *pp.host, false)
                 : std::make_unique<ProblemInputs>(be, p, pp.seed, false);
  };
  try {
    be.memory().relocate_buffers(pp.seed * 1000003u + static_cast<std::uint64_t>(r));
    prepare();
  } catch (const BackendError& e) {
    if (in) in->forget_device_memory();
    fail_rest(fmt::format("round {}: preparing inputs failed: {}", r + 1, e.what()));
    return !e.sticky || be.recover();
  }
  for (std::size_t k = 0; k < pp.rows.size(); ++k) {
    PendingRow& pr = pp.rows[(k + static_cast<std::size_t>(r)) % pp.rows.size()];
    if (pr.failed) continue;
    Strategy& st = *strategies[pr.strategy];
    bool set_up = false;
    try {
      ScopedRange range(be.profiler(), fmt::format("{} round {}", st.name(), r + 1));
      st.setup(be, p, in->io(), pr.options);
      set_up = true;
      pr.rounds.push_back(measure_forward(be, timed_forward(st, be, pr), opt.measure));
      set_up = false;
      st.teardown(be);
    } catch (const std::exception& e) {
      const auto* be_err = dynamic_cast<const BackendError*>(&e);
      bool sticky = be_err && be_err->sticky;
      if (set_up && !sticky) {
        try {
          st.teardown(be);
        } catch (...) {
        }
      }
      fail(pr, fmt::format("{} / {}: round {}: {}", p.label(), st.name(), r + 1, e.what()));
      if (!sticky) continue;
      in->forget_device_memory();
      bool ok = be.recover();
      try {
        st.teardown(be);
      } catch (...) {
      }
      if (!ok) {
        fail_rest("the device could not be recovered after an error in a later round");
        return false;
      }
      try {
        prepare();
      } catch (const std::exception& e2) {
        fail_rest(fmt::format("re-preparing inputs after a device error failed: {}", e2.what()));
        return true;
      }
    }
  }
  return true;
}

}  // namespace

nlohmann::json problem_to_json(const Problem& p) {
  return {{"batch", p.batch},
          {"heads", p.heads},
          {"seq_len", p.seq_len},
          {"head_dim", p.head_dim},
          {"pages", p.pages},
          {"page_size", p.page_size},
          {"pages_requested", p.pages_requested ? p.pages_requested : p.pages},
          {"kv_layout", kv_layout_name(p.kv_layout)},
          {"dtype", dtype_name(p.dtype)},
          {"causal", p.causal}};
}

nlohmann::json run_grid(Backend& be, const RunOptions& opt, std::vector<std::string>* warnings, ResumePoint* resume) {
  nlohmann::json results = nlohmann::json::array();
  DeviceInfo dev = be.device_info();
  std::int64_t limit = memory_limit(dev, opt.max_memory);
  check_memory_or_throw(be, opt.problems, opt.verify, limit);
  auto strategies = make_strategies(opt.strategies);
  Progress progress(static_cast<std::int64_t>(opt.problems.size()), opt.quiet);
  std::vector<PendingProblem> waiting;  // problems whose strategies wait for rounds 2..R
  std::size_t kept_host_bytes = 0;

  for (std::size_t pi = opt.start_problem; pi < opt.problems.size(); ++pi) {
    const Problem& p = opt.problems[pi];
    progress.begin_point(static_cast<std::int64_t>(pi), p.label());
    ScopedRange problem_range(be.profiler(), p.label());
    std::unique_ptr<ProblemInputs> in;
    std::string input_error;
    std::shared_ptr<const HostTensors> host;  // kept for the later rounds
    auto prepare = [&]() {
      if (opt.measure.rounds > 1 && !host) {
        auto t = std::make_shared<const HostTensors>(make_random_inputs(p, opt.seed + pi));
        if (kept_host_bytes + host_bytes(*t) <= kKeptHostInputBytes) {
          kept_host_bytes += host_bytes(*t);
          host = t;
        }
        in = std::make_unique<ProblemInputs>(be, p, *t, opt.verify);
        return;
      }
      in = host ? std::make_unique<ProblemInputs>(be, p, *host, opt.verify)
                : std::make_unique<ProblemInputs>(be, p, opt.seed + pi, opt.verify);
    };
    auto forget = [&]() {
      if (in) in->forget_device_memory();
      in.reset();
    };
    bool context_lost = false;
    try {
      prepare();
    } catch (const BackendError& e) {
      input_error = fmt::format("preparing inputs/reference failed: {}", e.what());
      forget();
      context_lost = e.sticky && !be.recover();
    } catch (const std::exception& e) {  // host allocations (std::bad_alloc) and the like
      input_error = fmt::format("preparing inputs/reference failed: {}", e.what());
      forget();
    }
    std::int64_t used = input_bytes(be, p, opt.verify);
    if (opt.measure.rounds > 1) used += DeviceMemory::kMaxRelocationSpacerBytes;  // later rounds' spacer
    std::vector<PendingRow> pending;  // strategies timed in the first round

    for (std::size_t si = 0; si < strategies.size(); ++si) {
      if (pi == opt.start_problem && si < opt.start_strategy) continue;
      auto& st = strategies[si];
      nlohmann::json row;
      row["problem"] = problem_to_json(p);
      row["strategy"] = st->name();
      LaunchContract contract = st->contract(p);
      row["launches"] = launches_json(contract, std::nullopt);
      auto finish = [&](const char* status, const std::string& reason) {
        row["status"] = status;
        row["reason"] = reason;
        results.push_back(row);
      };
      if (!input_error.empty()) {
        finish("failed", input_error);
        continue;
      }
      StrategyOptions sopt = opt.strategy;
      bool tile_from_cache = false;
      FusedTile cached;
      if (st->uses_fused_tile() && !sopt.fused_tile && opt.cached_tile && opt.cached_tile(p, &cached)) {
        // A cached tile that cannot take this problem (another build's tile list) falls back to the default.
        if (be.kernels().fused_can_implement(p, cached).empty()) {
          sopt.fused_tile = cached;
          tile_from_cache = true;
        } else if (warnings) {
          warnings->push_back(fmt::format("{}: cached fused tile {} cannot run it; using the default tile", p.label(), cached.name()));
        }
      }
      std::string why = st->can_implement(p, be, sopt);
      if (!why.empty()) {
        finish("unsupported", why);
        continue;
      }
      std::string no_room = workspace_refusal(used, st->workspace_bytes(p, sopt), limit);
      if (!no_room.empty()) {
        finish("unsupported", no_room);
        continue;
      }
      ScopedRange strategy_range(be.profiler(), st->name());
      bool set_up = false;
      try {
        {
          ScopedRange r(be.profiler(), "setup");
          st->setup(be, p, in->io(), sopt);
          set_up = true;
        }
        nlohmann::json cfg = st->config();
        nlohmann::json gemm_report = be.gemm().plan_report();
        if (tile_from_cache) cfg["tile_source"] = "cache";
        cfg["gemm_algos"] = gemm_report;
        cfg["source"] = config_source(gemm_report, cfg);
        row["config"] = cfg;
        // One poisoned forward, launch-counted; its output is what gets verified.
        in->poison_output();
        std::optional<LaunchRecord> rec;
        {
          ScopedRange r(be.profiler(), "verify forward");
          be.profiler().begin_launch_count();
          if (!opt.inject_fault.empty() && opt.inject_fault == st->name()) be.kernels().inject_fault();
          st->run(be);
          rec = be.profiler().end_launch_count();
        }
        row["launches"] = launches_json(contract, rec);
        if (opt.verify) {
          ErrorStats e = in->verify_output();
          double tol = tolerance_for(p.dtype);
          std::string failure = verify_failure(p, e);
          bool passed = failure.empty();
          row["verify"] = {{"reference", be.verifier().reference_name()}, {"max_abs_err", e.max_abs},
                           {"rel_l2_err", std::isfinite(e.rel_l2) ? nlohmann::json(e.rel_l2) : nlohmann::json(nullptr)},
                           {"tolerance", tol},   {"nonfinite", e.nonfinite}, {"passed", passed}};
          if (!passed) {
            set_up = false;
            st->teardown(be);
            finish("incorrect", failure);
            continue;
          }
        }
        PendingRow pr;
        pr.strategy = si;
        pr.options = sopt;
        if (double fraction = slowdown_for(opt.slowdown, st->name()); fraction > 0) {
          ScopedRange r(be.profiler(), "calibrate injected slowdown");
          InjectedDelay d = calibrate_delay(be, [&] { st->run(be); }, fraction, opt.measure);
          pr.slowed = true;
          pr.delay_ms = d.delay_ms;
          row["injected_slowdown"] = d.to_json();
        }
        {
          ScopedRange r(be.profiler(), "measure");
          pr.rounds.push_back(measure_forward(be, timed_forward(*st, be, pr), opt.measure));
        }
        set_up = false;
        st->teardown(be);
        pr.result = results.size();
        pending.push_back(std::move(pr));
        finish("ok", "");
      } catch (const UnsupportedError& e) {
        if (set_up) {
          set_up = false;
          st->teardown(be);
        }
        finish("unsupported", e.what());
      } catch (const BackendError& e) {
        std::string msg = fmt::format("{} / {}: {}", p.label(), st->name(), e.what());
        if (e.sticky) {
          // The context is gone: rebuild it and the inputs so the remaining strategies can run; where
          // the device cannot be rebuilt in this process, hand the rest of the grid to a fresh one.
          bool ok = be.recover();
          forget();
          try {
            st->teardown(be);
          } catch (...) {
          }
          if (!ok && resume) {
            finish("failed", msg);
            resume->problem = si + 1 < strategies.size() ? pi : pi + 1;
            resume->strategy = si + 1 < strategies.size() ? si + 1 : 0;
            resume->needed = resume->problem < opt.problems.size();  // nothing left: no fresh process
            // What timed before the error keeps the rounds it has.
            waiting.push_back({pi, opt.seed + pi, host, std::move(pending)});
            write_all_timing(waiting, opt, strategies, dev.clock_mhz_max, results, warnings);
            progress.finish();
            return results;
          }
          if (ok) {
            try {
              prepare();
            } catch (const std::exception& e2) {
              input_error = fmt::format("re-preparing inputs after a device error failed: {}", e2.what());
            }
          } else {
            input_error = "the device could not be recovered after an earlier error";
          }
        } else if (set_up) {
          try {
            st->teardown(be);
          } catch (...) {
          }
        }
        finish("failed", msg);
      } catch (const std::exception& e) {
        if (set_up) {
          try {
            st->teardown(be);
          } catch (...) {
          }
        }
        finish("failed", fmt::format("{} / {}: {}", p.label(), st->name(), e.what()));
      }
    }
    if (!pending.empty()) waiting.push_back({pi, opt.seed + pi, host, std::move(pending)});
    progress.end_point();
    if (context_lost && resume && pi + 1 < opt.problems.size()) {
      // Every row of this problem is recorded as failed; the next problems need a fresh process.
      resume->needed = true;
      resume->problem = pi + 1;
      resume->strategy = 0;
      break;
    }
  }
  // Rounds 2..R go round the whole grid, so each row's rounds spread over the run: on an H200 a problem's
  // speed drifts by 1-2% over seconds, and rounds taken back to back would all share one drift.
  bool usable = !(resume && resume->needed);
  for (int r = 1; r < opt.measure.rounds && usable; ++r)
    for (std::size_t k = 0; k < waiting.size() && usable; ++k) {
      PendingProblem& pp = waiting[(k + static_cast<std::size_t>(r)) % waiting.size()];
      ScopedRange range(be.profiler(), fmt::format("{} round {}", opt.problems[pp.index].label(), r + 1));
      if (!run_round(be, pp, r, opt, strategies, results)) {
        usable = false;
        if (warnings) warnings->push_back(fmt::format("a device error in round {} ended the rounds; rows keep the rounds they finished", r + 1));
      }
    }
  write_all_timing(waiting, opt, strategies, dev.clock_mhz_max, results, warnings);
  progress.finish();
  return results;
}

}  // namespace ab

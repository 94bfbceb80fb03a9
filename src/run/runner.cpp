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

  for (std::size_t pi = opt.start_problem; pi < opt.problems.size(); ++pi) {
    const Problem& p = opt.problems[pi];
    progress.begin_point(static_cast<std::int64_t>(pi), p.label());
    ScopedRange problem_range(be, p.label());
    std::unique_ptr<ProblemInputs> in;
    std::string input_error;
    auto prepare = [&]() { in = std::make_unique<ProblemInputs>(be, p, opt.seed + pi, opt.verify); };
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
      if (st->name() == "fused" && !sopt.fused_tile && opt.cached_tile && opt.cached_tile(p, &cached)) {
        // A cached tile that cannot take this problem (another build's tile list) falls back to the default.
        if (be.fused_can_implement(p, cached).empty()) {
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
      ScopedRange strategy_range(be, st->name());
      bool set_up = false;
      try {
        {
          ScopedRange r(be, "setup");
          st->setup(be, p, in->io(), sopt);
          set_up = true;
        }
        nlohmann::json cfg = st->config();
        nlohmann::json gemm_report = be.gemm_plan_report();
        if (tile_from_cache) cfg["tile_source"] = "cache";
        cfg["gemm_algos"] = gemm_report;
        cfg["source"] = config_source(gemm_report, cfg);
        row["config"] = cfg;
        // One poisoned forward, launch-counted; its output is what gets verified.
        in->poison_output();
        std::optional<LaunchRecord> rec;
        {
          ScopedRange r(be, "verify forward");
          be.begin_launch_count();
          if (!opt.inject_fault.empty() && opt.inject_fault == st->name()) be.inject_fault();
          st->run(be);
          rec = be.end_launch_count();
        }
        row["launches"] = launches_json(contract, rec);
        if (opt.verify) {
          ErrorStats e = in->verify_output();
          double tol = tolerance_for(p.dtype);
          std::string failure = verify_failure(p, e);
          bool passed = failure.empty();
          row["verify"] = {{"reference", be.reference_name()}, {"max_abs_err", e.max_abs},
                           {"rel_l2_err", std::isfinite(e.rel_l2) ? nlohmann::json(e.rel_l2) : nlohmann::json(nullptr)},
                           {"tolerance", tol},   {"nonfinite", e.nonfinite}, {"passed", passed}};
          if (!passed) {
            set_up = false;
            st->teardown(be);
            finish("incorrect", failure);
            continue;
          }
        }
        Measurement m;
        {
          ScopedRange r(be, "measure");
          m = measure_forward(be, [&] { st->run(be); }, opt.measure);
        }
        set_up = false;
        st->teardown(be);
        row["time_ms"] = m.gpu.to_json();
        row["host_ms"] = m.host.to_json();
        if (opt.measure.keep_samples) row["samples_ms"] = m.samples;
        row["timer"] = m.timer;
        row["stop_reason"] = m.stop_reason;
        row["sm_clock_mhz"] = m.sm_clock_mhz;
        double sec = m.gpu.median * 1e-3;
        row["tflops"] = sec > 0 ? p.flops() / sec * 1e-12 : 0.0;
        row["gbps"] = sec > 0 ? p.bytes() / sec * 1e-9 : 0.0;
        for (const auto& w : m.warnings) {
          std::string msg = fmt::format("{} / {}: {}", p.label(), st->name(), w);
          if (warnings && std::find(warnings->begin(), warnings->end(), msg) == warnings->end()) warnings->push_back(msg);
        }
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
    progress.end_point();
    if (context_lost && resume && pi + 1 < opt.problems.size()) {
      // Every row of this problem is recorded as failed; the next problems need a fresh process.
      resume->needed = true;
      resume->problem = pi + 1;
      resume->strategy = 0;
      break;
    }
  }
  progress.finish();
  return results;
}

}  // namespace ab

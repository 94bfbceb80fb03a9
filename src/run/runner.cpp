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

namespace ab {

namespace {

constexpr unsigned char kPoison = 0xFF;  // fp16/bf16/fp32 NaN in every element

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return fmt::format("{:.2f} {}", b, units[u]);
}

std::int64_t kv_elements(const Problem& p) {
  if (p.kv_layout == KvLayout::paged) return p.pool_slots() * p.heads * p.page_size * p.head_dim;
  return p.qkv_elements() + kv_slack_rows(p) * p.head_dim;
}

// The problem's tensors in backend memory, plus the reference output on the host.
struct ProblemInputs {
  Buffer q, k, v, o, block_table, ref;
  std::vector<std::int32_t> block_table_host;
  std::vector<float> ref_host;

  void allocate_and_upload(Backend& be, const Problem& p, const HostTensors& t) {
    std::size_t es = dtype_size(p.dtype);
    q = Buffer(be, p.qkv_elements() * es);
    o = Buffer(be, p.qkv_elements() * es);
    std::size_t kv_bytes = kv_elements(p) * es;
    k = Buffer(be, kv_bytes);
    v = Buffer(be, kv_bytes);
    be.upload(q.get(), t.q.data(), t.q.size() * 2);
    be.fill_bytes(k.get(), 0, kv_bytes);  // zero slack rows / unused pool rows
    be.fill_bytes(v.get(), 0, kv_bytes);
    be.upload(k.get(), t.k.data(), t.k.size() * 2);
    be.upload(v.get(), t.v.data(), t.v.size() * 2);
    block_table_host = t.block_table;
    if (!t.block_table.empty()) {
      block_table = Buffer(be, t.block_table.size() * 4);
      be.upload(block_table.get(), t.block_table.data(), t.block_table.size() * 4);
    }
  }
  AttentionIO io() const {
    AttentionIO a;
    a.q = q.get();
    a.k = k.get();
    a.v = v.get();
    a.o = o.get();
    a.block_table = block_table.as<std::int32_t>();
    a.block_table_host = block_table_host.empty() ? nullptr : block_table_host.data();
    return a;
  }
  void forget_device_memory() {
    for (Buffer* b : {&q, &k, &v, &o, &block_table, &ref}) b->forget();
  }
};

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

std::int64_t input_bytes(const Problem& p, bool verify) {
  std::int64_t es = static_cast<std::int64_t>(dtype_size(p.dtype));
  std::int64_t b = 2 * p.qkv_elements() * es + 2 * kv_elements(p) * es + p.batch * p.pages * 4;
  if (verify) b += p.qkv_elements() * 4;
  return b;
}

void check_memory_or_throw(const std::vector<Problem>& problems, bool verify, std::int64_t limit) {
  if (limit <= 0) return;
  for (const Problem& p : problems) {
    std::int64_t need = input_bytes(p, verify);
    if (need > limit)
      throw UsageError(fmt::format("problem {} needs {} for its tensors alone, more than the {} available; refused before allocating",
                                   p.label(), human_bytes(static_cast<double>(need)), human_bytes(static_cast<double>(limit))));
  }
}

nlohmann::json run_grid(Backend& be, const RunOptions& opt, std::vector<std::string>* warnings, ResumePoint* resume) {
  nlohmann::json results = nlohmann::json::array();
  DeviceInfo dev = be.device_info();
  std::int64_t limit = opt.max_memory > 0 ? opt.max_memory : (dev.memory_free > 0 ? dev.memory_free : dev.memory_bytes);
  check_memory_or_throw(opt.problems, opt.verify, limit);
  auto strategies = make_strategies(opt.strategies);
  Progress progress(static_cast<std::int64_t>(opt.problems.size()), opt.quiet);

  for (std::size_t pi = opt.start_problem; pi < opt.problems.size(); ++pi) {
    const Problem& p = opt.problems[pi];
    progress.begin_point(static_cast<std::int64_t>(pi), p.label());
    ScopedRange problem_range(be, p.label());
    HostTensors host = make_random_inputs(p, opt.seed + pi);
    ProblemInputs in;
    std::string input_error;
    auto prepare = [&]() {
      in.allocate_and_upload(be, p, host);
      if (opt.verify) {
        ScopedRange r(be, "reference");
        in.ref = Buffer(be, p.qkv_elements() * 4);
        be.reference_attention(p, in.io(), in.ref.as<float>());
        be.synchronize();
        in.ref_host.resize(p.qkv_elements());
        be.download(in.ref_host.data(), in.ref.get(), in.ref_host.size() * 4);
      }
    };
    try {
      prepare();
    } catch (const BackendError& e) {
      input_error = fmt::format("preparing inputs/reference failed: {}", e.what());
      if (e.sticky && be.recover()) in.forget_device_memory();
    }
    std::int64_t used = input_bytes(p, opt.verify);

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
      std::int64_t ws = st->workspace_bytes(p, sopt);
      if (used + ws > limit) {
        finish("unsupported", fmt::format("needs {} of workspace; {} of {} left after the inputs",
                                          human_bytes(static_cast<double>(ws)),
                                          human_bytes(static_cast<double>(limit - used)),
                                          human_bytes(static_cast<double>(limit))));
        continue;
      }
      ScopedRange strategy_range(be, st->name());
      bool set_up = false;
      try {
        {
          ScopedRange r(be, "setup");
          st->setup(be, p, in.io(), sopt);
          set_up = true;
        }
        nlohmann::json cfg = st->config();
        nlohmann::json gemm_report = be.gemm_plan_report();
        if (tile_from_cache) cfg["tile_source"] = "cache";
        cfg["gemm_algos"] = gemm_report;
        cfg["source"] = config_source(gemm_report, cfg);
        row["config"] = cfg;
        // One poisoned forward, launch-counted; its output is what gets verified.
        be.fill_bytes(in.o.get(), kPoison, in.o.bytes());
        be.synchronize();
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
          std::vector<unsigned char> out(in.o.bytes());
          be.download(out.data(), in.o.get(), out.size());
          ErrorStats e = compare_output(p, out.data(), in.ref_host.data());
          double tol = tolerance_for(p.dtype);
          bool passed = e.nonfinite == 0 && e.rel_l2 <= tol;
          row["verify"] = {{"reference", be.reference_name()}, {"max_abs_err", e.max_abs},
                           {"rel_l2_err", std::isfinite(e.rel_l2) ? nlohmann::json(e.rel_l2) : nlohmann::json(nullptr)},
                           {"tolerance", tol},   {"nonfinite", e.nonfinite}, {"passed", passed}};
          if (!passed) {
            st->teardown(be);
            finish("incorrect", e.nonfinite ? fmt::format("{} of {} outputs are NaN/Inf (unwritten or overflowed)", e.nonfinite, e.count)
                                            : fmt::format("rel L2 error {:.3g} over tolerance {:.3g}", e.rel_l2, tol));
            continue;
          }
        }
        Measurement m;
        {
          ScopedRange r(be, "measure");
          m = measure_forward(be, [&] { st->run(be); }, opt.measure);
        }
        st->teardown(be);
        set_up = false;
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
        if (set_up) st->teardown(be);
        finish("unsupported", e.what());
      } catch (const BackendError& e) {
        std::string msg = fmt::format("{} / {}: {}", p.label(), st->name(), e.what());
        if (e.sticky) {
          // The context is gone: rebuild it and the inputs so the remaining strategies can run; where
          // the device cannot be rebuilt in this process, hand the rest of the grid to a fresh one.
          bool ok = be.recover();
          in.forget_device_memory();
          try {
            st->teardown(be);
          } catch (...) {
          }
          if (!ok && resume) {
            finish("failed", msg);
            resume->needed = true;
            resume->problem = si + 1 < strategies.size() ? pi : pi + 1;
            resume->strategy = si + 1 < strategies.size() ? si + 1 : 0;
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
  }
  progress.finish();
  return results;
}

}  // namespace ab

// One definition of the flags run and tune share; CLI11 validators where CLI11 can check the value.
#include "cli/shared_flags.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "cli/flag_values.hpp"
#include "cli/peer_flags.hpp"
#include "cli/run_command.hpp"
#include "core/errors.hpp"
#include "measure/measure.hpp"

namespace ab {

CLI::Validator usage_validator(std::function<void(const std::string&)> check, const std::string& name) {
  return CLI::Validator(
      [check](std::string& s) -> std::string {
        try {
          check(s);
          return {};
        } catch (const UsageError& e) {
          std::string m = e.what();
          if (m.rfind("--", 0) == 0 && m.find(": ") != std::string::npos) m = m.substr(m.find(": ") + 2);
          return m;
        }
      },
      name);
}

void add_shared_flags(CLI::App& app, SharedFlags& f, const SharedFlagText& text) {
  add_grid_flags(app, f);
  app.add_option("--strategies", f.strategies, "comma list of strategies, or all")->capture_default_str();
  app.add_option("--backend", f.backend, "auto | cuda | cpu")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  app.add_option("--device", f.device, "CUDA device index")
      ->capture_default_str()
      ->check(non_negative_integer())
      ->each([&f](const std::string&) { f.device_given = true; });
  app.add_option("--devices", f.devices,
                 "all | 0,2,...: one worker process per device, problems from one queue, one report "
                 "(docs/scale-out-devices.md); on the CPU backend each index is a worker process");
  app.add_flag("--mixed_devices,--mixed-devices", f.mixed_devices, "with --devices: allow GPUs of different models");
  app.add_option("--worker_dir", f.worker_dir)->group("");  // internal: see orchestrate/worker_pool.hpp
  app.add_option("--worker_device", f.worker_device)->group("");
  app.add_option("--max_memory,--max-memory", f.max_memory, "memory limit (e.g. 8GiB); default: the device's free memory")
      ->check(usage_validator([](const std::string& s) { parse_bytes("max_memory", s); }, "SIZE"));
  app.add_option("--warmup", f.warmup, text.warmup);
  app.add_option("--min_samples,--min-samples", f.min_samples, text.min_samples);
  double fallback = text.max_time_default;
  app.add_option("--max_time,--max-time", f.max_time, text.max_time)
      ->check(usage_validator([fallback](const std::string& s) { parse_max_time(s, fallback); }, "SECONDS"));
  app.add_option("--max_noise,--max-noise", f.max_noise, text.max_noise)
      ->capture_default_str()
      ->check(usage_validator([](const std::string& s) { parse_fraction("max_noise", s); }, "FRACTION"));
  app.add_option("--timer", f.timer, text.timer)->capture_default_str()->check(CLI::IsMember(text.timers));
  app.add_flag("--hot", f.hot, "no L2 flush between samples");
  app.add_option("--start_delay,--start-delay", f.start_delay_ms,
                 fmt::format("events/graph timers on a GPU: ms of a delay kernel queued before each sample's start "
                             "event, so the host's dispatch of the first launch is not timed (default {}; 0: start on "
                             "an idle GPU)",
                             kDefaultStartDelayMs))
      ->check(CLI::Range(0.0, kMaxStartDelayMs));
  app.add_option("--plugin", f.plugins, "load an attention plugin (include/attnbench/plugin.h); repeatable; docs/plugins.md")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--peers", f.peers,
                 "other libraries' kernels to run beside the strategies, as peer:<name> rows: all, none, or names "
                 "(e.g. cudnn,flashinfer-decode); default none, or the \"peers\" of a --config suite, which this "
                 "replaces; found in $ATTNBENCH_PEERS_DIR's folders when it is set, else <binary>/peers and "
                 "<binary>/../lib/attnbench/peers; `attnbench list` shows them; docs/peers.md")
      ->check(usage_validator([](const std::string& s) { parse_peers_flag(s); }, "all|none|NAME,..."));
  app.add_option("--plugin_timeout,--plugin-timeout", f.plugin_timeout,
                 "seconds a plugin's or peer's child process may take for one problem before it is killed (default 300); "
                 "loading one may take this long, at most 30")
      ->check(CLI::Range(0.1, 86400.0));
  app.add_option("--seed", f.seed, "random input seed")->capture_default_str()->check(non_negative_integer());
  app.add_option("--scores", f.scores, "score matrix precision: input (the input dtype, as PyTorch) | fp32")
      ->capture_default_str()
      ->check(CLI::IsMember({"input", "fp32"}));
  app.add_option("--gqa_packing,--gqa-packing", f.gqa_packing,
                 "GEMM strategies with grouped KV heads: on packs the query heads sharing a KV head into the rows "
                 "of one GEMM; off broadcasts K/V to every query head")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_flag("--quiet,-q", f.quiet, text.quiet);
  app.add_option("--shard", f.shard,
                 "run shard INDEX/COUNT of the grid (0-based, balanced by estimated cost); default: from "
                 "SLURM_ARRAY_TASK_ID/COUNT or JOB_COMPLETION_INDEX with ATTNBENCH_SHARD_COUNT");
  app.add_flag("--resume", f.resume, "skip the problems the output's journal (OUTPUT.journal) holds as finished");
}

void check_flags_for_backend(const SharedFlags& f, const Backend& backend) {
  if (backend.kind() != BackendKind::cpu) return;
  // The CPU backend never flushes a cache, so --hot changes nothing there: said, not silently accepted.
  if (f.hot) std::fprintf(stderr, "attnbench: note: --hot: the CPU backend has no L2 flush; every CPU run is hot\n");
  if (f.timer != "graph" && f.timer != "cupti") return;
  std::string why = fmt::format("--timer={}: the CPU backend has no {}; it times with events", f.timer,
                                f.timer == "graph" ? "CUDA graphs" : "CUPTI");
  if (f.backend == "cpu") throw UsageError(why + " (give --timer=events)");
  std::fprintf(stderr, "attnbench: note: %s\n", why.c_str());
}

}  // namespace ab

// Plugin rows in a child process: this binary again, told to run one plugin on one problem (the hidden
// --isolated_point), with a time limit. A crash, an abort or a hang costs only that row: it becomes `failed`
// with how the child ended; otherwise the child's own row (ok, unsupported, incorrect or failed) is taken.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "core/strategy.hpp"
#include "run/result_row.hpp"

namespace ab {

// Runs `strategy` on problem `index` of the parent's grid (its arguments `argv`) in a child process killed
// after `timeout_s` seconds; returns its row, or a failed row saying how the child ended. Warnings the child
// reported that are not in `warnings` are appended. `copy_gbps`: this process's measured copy bandwidth,
// handed to the child (the CPU backend's, so that it does not measure it again; 0: none).
std::vector<ResultRow> run_plugin_rows_in_child(const std::vector<std::string>& argv, std::size_t index,
                                                const Problem& problem, const Strategy& strategy, double timeout_s,
                                                double copy_gbps, std::vector<std::string>* warnings);

// What a tune trial's child needs besides the problem: the backend, the seed of the problem's inputs, and the
// measurement flags (as `run` spells them, e.g. {"--warmup=1", "--timer=graph"}).
struct PluginTrialSetup {
  std::string backend;  // cpu | cuda
  int device = 0;
  std::uint64_t seed = 0;
  std::vector<std::string> measure_flags;
  double timeout_s = 300;
  double copy_gbps = 0;  // see run_plugin_rows_in_child
};

// One configuration of a plugin on one problem, verified and timed in a child process (`run` with that
// problem alone); its row, or a failed row saying how the child ended.
ResultRow run_plugin_trial_in_child(const PluginTrialSetup& setup, const Problem& problem, const Strategy& strategy,
                                    const std::string& config);

}  // namespace ab

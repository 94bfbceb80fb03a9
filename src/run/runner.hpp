// The grid runner: for each problem, allocate random inputs once, compute the reference, then put every
// strategy through can_implement → setup → poisoned, counted, verified forward → timing → teardown,
// producing one typed row each (run/result_row.hpp). A failing strategy becomes a `failed` row; the others go on. With
// measure.rounds > 1, every strategy that timed is timed again in further rounds, each on freshly placed
// inputs (Backend::relocate_buffers) with the strategies' order rotated, and its row combines the rounds.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.hpp"
#include "core/strategy.hpp"
#include "measure/measure.hpp"
#include "run/injected_slowdown.hpp"
#include "run/result_row.hpp"

namespace ab {

struct RunOptions {
  std::vector<Problem> problems;
  std::string strategies = "all";
  bool verify = false;
  MeasureSettings measure;
  StrategyOptions strategy;
  std::int64_t max_memory = 0;  // bytes; 0 = the device's free memory
  std::uint64_t seed = 1234;
  bool quiet = false;
  // Profiling mode (--profile): per row the first forward (verified with --verify) is the warm-up, then one
  // forward inside an NVTX range named profile_range_name(...); no timing loop, no launch counting, no timing.
  bool profile = false;
  // The configuration the user asked of the strategies that have one, given to each as StrategyOptions::config
  // (strategy_options): the tile of a strategy that uses_fused_tile() (--tile), and the configuration of a
  // plugin, a strategy that runs_isolated() (--plugin_config). Unset or empty: the cache's, else the default.
  std::optional<FusedTile> tile;
  std::string plugin_config;
  // Optional per-problem fused tile (the heuristic cache); returns false when it has none.
  std::function<bool(const Problem&, FusedTile*)> cached_tile;
  // Where to start (a resumed run in a fresh process after the device context was lost).
  std::size_t start_problem = 0, start_strategy = 0;
  // The problem after the last one to run (SIZE_MAX: to the end of the grid): a plugin row's child process
  // runs one problem.
  std::size_t end_problem = SIZE_MAX;
  // Rows of a strategy that runs_isolated() (a plugin) on problem `index`, produced elsewhere (a child
  // process with a time limit: orchestrate/plugin_process.hpp); unset: such strategies run in this process.
  std::function<std::vector<ResultRow>(std::size_t index, const Problem&, const Strategy&)> isolated_rows;
  // Optional per-(problem, strategy) plugin configuration (the heuristic cache); returns false when none.
  std::function<bool(const Problem&, const std::string& strategy, std::string* config)> cached_plugin_config;
  // Which grid indices to run (a shard, less what a resumed journal holds); unset: every problem. Skipped
  // problems keep their indices, so a problem's seed (seed + index) is the same in every shard.
  std::function<bool(std::size_t)> include;
  // Called once per problem whose rows are final (after its last round), with its grid index and rows; not
  // for a problem cut short by a stop request (core/stop_request.hpp) or handed to a fresh process.
  std::function<void(std::size_t, const std::vector<ResultRow>&)> problem_done;
  // Test hook: the strategy whose verify forward injects a sticky device fault (ATTNBENCH_INJECT_FAULT).
  std::string inject_fault;
  // Test hook: strategies slowed by a calibrated delay inside the timed region (ATTNBENCH_INJECT_SLOWDOWN).
  SlowdownSpec slowdown;
};

// Set by run_grid_rows when a device error left the context unusable and recover() failed: the rows so far
// are returned and the run must go on in a fresh process from (problem, strategy).
struct ResumePoint {
  bool needed = false;
  std::size_t problem = 0, strategy = 0;
};

// The options `st` runs with before the cache is asked: opt.strategy with the user's configuration for `st`.
StrategyOptions strategy_options(const RunOptions& opt, const Strategy& st);

// The NVTX range of a row's profiled forward: "profile LABEL STRATEGY[ TILE]" with '/', '@', '[' and ']'
// (Nsight Compute's NVTX filter syntax) replaced by '_' (docs/profiling.md).
std::string profile_range_name(const Problem& p, const std::string& strategy, const std::optional<FusedTile>& tile);

// Runs the grid; returns its typed rows, in report order. On a stop request (SIGINT/SIGTERM) it returns
// after the current measurement: the problem in progress is unfinished and not passed to problem_done. Each strategy runs through a StrategySession
// (run/strategy_session.hpp).
std::vector<ResultRow> run_grid_rows(Backend& backend, const RunOptions& opt, std::vector<std::string>* warnings,
                                     ResumePoint* resume = nullptr);

}  // namespace ab

// The flags `run` and `tune` share (the grid, strategies, backend, device, measurement and memory limits),
// added to both subcommands by one function with CLI11's validators, and the checks that need the backend.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/grid_flags.hpp"
#include "core/backend.hpp"

namespace ab {

struct SharedFlags : GridFlags {
  std::string strategies = "all";
  std::string backend = "auto";
  int device = 0;
  std::string max_memory;
  int warmup = -1, min_samples = -1;  // -1: the backend's default
  std::string max_noise = "2%";
  std::string max_time;  // empty: the command's default
  bool hot = false;
  double start_delay_ms = -1;  // --start_delay; -1: MeasureSettings' default
  std::string timer;  // set by each command's flags struct
  unsigned long long seed = 1234;
  std::string scores = "input";
  std::string gqa_packing = "on";
  bool quiet = false;
  std::vector<std::string> plugins;  // --plugin=PATH, repeatable (cli/plugin_flags.hpp)
  std::string peers;                 // --peers=all|none|NAME,...: peers to run as peer:<name>; "": not given (a
                                     // suite's "peers", else none: cli/peer_flags.hpp)
  double plugin_timeout = 300;       // seconds a plugin row's child process may take
  std::string devices;         // --devices=all|0,2,...: one worker process per device (orchestrate/worker_pool.hpp)
  bool mixed_devices = false;  // --mixed_devices: allow devices of different models
  bool device_given = false;   // --device was on the command line (refused beside --devices)
  std::string worker_dir;      // hidden: set by the pool for its workers
  int worker_device = -1;      // hidden: the device index a worker serves, as the user named it
  std::string shard;    // "i/N"; empty: from the environment (orchestrate/shard_choice.hpp) or the whole grid
  bool resume = false;  // continue from the output's journal (orchestrate/grid_journal.hpp)
};

// What differs between run and tune: help texts, the accepted timers and --max_time's default.
struct SharedFlagText {
  std::string warmup, min_samples, max_time, max_noise, timer, quiet;
  std::vector<std::string> timers;
  double max_time_default = 1.0;
};

void add_shared_flags(CLI::App& app, SharedFlags& f, const SharedFlagText& text);

// A flag that cannot take effect on the backend chosen is refused (UsageError, one line) when the backend was
// asked for by name, and announced on stderr when it was chosen by --backend=auto: --timer=graph or cupti on
// the CPU backend.
void check_flags_for_backend(const SharedFlags& f, const Backend& backend);

// A CLI11 validator from a check that throws UsageError "--flag: why": the flag's name is CLI11's to add.
CLI::Validator usage_validator(std::function<void(const std::string&)> check, const std::string& name);

}  // namespace ab

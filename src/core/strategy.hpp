// The dispatch-strategy interface (cutlass_profiler's can_implement / run split) and launch contracts.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.hpp"
#include "core/problem.hpp"

namespace ab {

// What a strategy promises to launch for one forward, as a function of (B, H, P).
struct LaunchContract {
  std::int64_t gemm_calls = 0;  // library GEMM calls (each one device kernel unless the library splits)
  std::int64_t kernels = 0;     // our own kernels (softmax, combine, finalize, gather, fused)
  std::int64_t total() const { return gemm_calls + kernels; }
  std::string formula;          // e.g. "2·B·H·P gemm + B·H·P + 1 kernels"
  // false: no count is promised (a library peer whose plan decides its kernels at setup, plugin.h's -1); the
  // row's launches are still measured and reported, but there is nothing to check them against.
  bool declared = true;
};

// What one strategy runs with: the choices every GEMM strategy reads, and the strategy's own configuration.
struct StrategyOptions {
  // Precision of the materialised score matrix: fp32, or the input dtype (as PyTorch's unfused path).
  bool fp32_scores = false;
  // GEMM strategies with grouped KV heads: pack the query heads that share a KV head into the rows of one
  // GEMM (true), or broadcast K/V to every query head (false), to compare the two.
  bool gqa_packing = true;
  // The strategy's own configuration, named in its own vocabulary, which only it reads: the fused strategy's
  // tile (FusedTile::name, "m128n64w4s2", "decode-s8"), a plugin's configuration (one of tunable_configs());
  // the GEMM strategies have none. Empty: the strategy's default (the first tile that can implement the
  // problem, the plugin's first configuration).
  std::string config;
};

// What a strategy chose for one problem: the typed core of a report row's "config" (run/result_row.hpp adds
// the GEMM plans and where the configuration came from).
struct StrategyConfig {
  std::optional<DType> score_dtype;    // GEMM strategies: precision of the materialised score matrix
  std::optional<bool> gathered_pages;  // GEMM strategies: K/V pages gathered into contiguous tensors first
  std::optional<bool> gqa_packed;      // GEMM strategies: a group's query heads were rows of one GEMM
  std::optional<double> padded_fraction;  // strided GEMM strategies on a ragged batch: share of padded keys
  std::optional<FusedTile> tile;       // fused: the tile that ran
  std::string tile_source;             // fused: heuristic | user | cache ("" for the GEMM strategies)
  std::string plugin_config;           // plugin strategies: the configuration that ran ("" otherwise)
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // What one forward launches for `p` with options `opt` (GQA packing changes it).
  virtual LaunchContract contract(const Problem& p, const StrategyOptions& opt) const = 0;
  LaunchContract contract(const Problem& p) const { return contract(p, StrategyOptions{}); }
  // Empty string when the strategy can run `p` on `backend`, else the reason it cannot.
  virtual std::string can_implement(const Problem& p, const Backend& backend,
                                    const StrategyOptions& opt) const = 0;
  // Workspace this strategy allocates for `p`, for the memory estimate made before allocating.
  virtual std::int64_t workspace_bytes(const Problem& p, const StrategyOptions& opt) const = 0;
  // Allocate workspace, make GEMM plans and pointer arrays. Not timed.
  virtual void setup(Backend& backend, const Problem& p, const AttentionIO& io, const StrategyOptions& opt) = 0;
  // One forward into io.o. Must not allocate or synchronize (it is captured into graphs).
  virtual void run(Backend& backend) = 0;
  // After a forward whose output is verified (never between timed forwards): make io.o hold that forward's
  // output in attnbench's layout. Only a strategy that writes its own layout (a token-major plugin) has work
  // here; it may synchronize.
  virtual void publish_output(Backend& backend) { (void)backend; }
  // Free workspace and plans.
  virtual void teardown(Backend& backend) = 0;
  // After a sticky device error, before the backend rebuilds its context (every allocation goes with it): drop,
  // never free, the device memory this strategy holds or points at (buffers of its own, the inputs' guard
  // regions). Its teardown follows and must touch none of it. Only a strategy that allocates for itself or keeps
  // pointers into the inputs past setup has work here.
  virtual void forget_device_memory() {}
  // What this strategy chose for the report's "config" (tile, gathered pages, score precision...).
  virtual StrategyConfig config() const = 0;
  // True when the strategy runs the backend's fused kernel with a tile from StrategyOptions::fused_tile (the
  // tuner searches tiles instead of GEMM algorithms, and the heuristic cache supplies a tile).
  virtual bool uses_fused_tile() const { return false; }
  // True for a strategy whose code attnbench does not own (a plugin): its rows run in a child process with a
  // time limit (orchestrate/plugin_process.hpp), so that a crash or a hang costs only its own rows.
  virtual bool runs_isolated() const { return false; }
  // The problem variants (Problem::variants: "sliding window", "soft-capping", "sinks") this strategy runs. A problem with
  // another one is refused by can_run before can_implement is asked; a plugin's ABI carries none of them yet.
  virtual std::vector<std::string> runs_variants() const { return {}; }
  // What every caller asks (run, tune, --dry_run): "" when the strategy runs each of p's variants and
  // can_implement accepts p, else the reason.
  std::string can_run(const Problem& p, const Backend& backend, const StrategyOptions& opt) const {
    const std::vector<std::string> mine = runs_variants(), kernels = backend.kernels().runs_variants();
    for (const std::string& v : p.variants()) {
      if (std::find(mine.begin(), mine.end(), v) == mine.end()) return name() + " does not run " + v + " problems";
      if (std::find(kernels.begin(), kernels.end(), v) == kernels.end())
        return "the " + std::string(backend_kind_name(backend.kind())) + " backend's kernels do not apply " + v + " yet";
    }
    return can_implement(p, backend, opt);
  }
  // The configurations the tuner searches for this strategy (plugins); empty for the built-in ones.
  virtual std::vector<std::string> tunable_configs() const { return {}; }
  // The version of the library whose code this strategy runs (a plugin's or peer's table `version`), which
  // its rows carry; empty for the built-in ones (the report's tool version is theirs).
  virtual std::string library_version() const { return {}; }
};

}  // namespace ab

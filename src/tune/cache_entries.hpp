// The two kinds of heuristic-cache entry (a tuned GEMM algorithm, a tuned fused tile) and their JSON.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/backend.hpp"
#include "core/utc_timestamp.hpp"  // utc_timestamp() for tuned_at

namespace ab {

// One tuned GEMM, keyed by (environment, GemmShape::key()).
struct GemmCacheEntry {
  std::string env;             // CacheEnvironment::id()
  std::string key;             // GemmShape::key()
  nlohmann::json shape;        // GemmShape::to_json()
  GemmAlgo algo;               // decoded attributes + 64-byte blob (GemmAlgo::to_json)
  double best_ms = 0;          // median forward time with `algo` (see measured_with)
  double heuristic_ms = 0;     // the same with the heuristic's first choice; 0 = unknown (it failed)
  double gain = 0;             // heuristic_ms / best_ms (>= 1); 0 = unknown
  std::string heuristic_algo;  // label of the heuristic's first choice
  int candidates = 0;          // candidates tried
  int failed = 0;              // of which failed to set/run or were incorrect
  nlohmann::json failures = nlohmann::json::array();  // [{"algo", "reason"}]
  std::string search;          // "heuristic" or "exhaustive"
  int top = 0;                 // --top for heuristic search
  // Times are of a whole strategy forward with this GEMM switched and its other GEMMs at their best:
  // {"strategy", "problem"} says which one.
  nlohmann::json measured_with = nlohmann::json::object();
  std::string tuned_at;        // ISO-8601 UTC
  nlohmann::json to_json() const;
  // Throws UsageError naming `where` when a field is missing or has the wrong type.
  static GemmCacheEntry from_json(const nlohmann::json& j, const std::string& where);
};

// One tuned fused tile, keyed by (environment, problem_cache_key(problem)).
struct FusedCacheEntry {
  std::string env;
  std::string key;            // problem_cache_key()
  nlohmann::json problem;     // problem_cache_json()
  FusedTile tile;
  double best_ms = 0;
  double default_ms = 0;      // the backend's default tile (first that can implement); 0 = unknown
  double gain = 0;            // default_ms / best_ms; 0 = unknown
  double best_noise = 0;      // relative noise of best_ms's measurement; 0 = unknown
  std::string default_tile;   // its name
  int candidates = 0, failed = 0;
  nlohmann::json failures = nlohmann::json::array();  // [{"tile", "reason"}]
  std::string tuned_at;
  nlohmann::json to_json() const;
  static FusedCacheEntry from_json(const nlohmann::json& j, const std::string& where);
};

// One tuned plugin (or in-process peer) configuration, keyed by (environment, problem_cache_key(problem) + "|" +
// strategy).
struct PluginCacheEntry {
  std::string env;
  std::string key;            // problem_cache_key() + "|plugin:<name>" (or "|peer:<name>")
  std::string strategy;       // "plugin:<name>" or "peer:<name>"
  nlohmann::json problem;     // problem_cache_json()
  std::string config;         // the configuration that won
  double best_ms = 0;
  double default_ms = 0;      // the plugin's default configuration; 0 = unknown
  std::string default_config;
  int candidates = 0, failed = 0;
  std::string tuned_at;
  std::string library_version;  // the library tuned (its table's `version`); "" in caches written before it
  // Whether the entry may configure the library loaded now (its table's `version`): as an entry applies only
  // on the environment it was tuned on (tune/cache_environment.hpp), a plugin entry applies only to the
  // library version it was tuned with. An entry that records none (written before versions were) applies.
  bool applies_to_library(const std::string& loaded_version) const {
    return library_version.empty() || library_version == loaded_version;
  }
  nlohmann::json to_json() const;
  static PluginCacheEntry from_json(const nlohmann::json& j, const std::string& where);
};

// A fused tile (FusedTile::from_json) in the cache's wording: UsageError "WHERE: field 'F' ...".
FusedTile fused_tile_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace ab

// The heuristic cache (attnbench.cache/1): tuned GEMM algorithms and fused tiles per environment, loaded,
// merged, saved atomically, and served to a backend as its GEMM chooser.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.hpp"
#include "core/problem.hpp"
#include "tune/cache_entries.hpp"
#include "tune/cache_environment.hpp"

namespace ab {

inline constexpr const char* kCacheSchema = "attnbench.cache/1";

class HeuristicCache {
 public:
  HeuristicCache() = default;

  // Reads a cache file. UsageError (one line naming the file) when it is missing, not JSON, has another
  // schema, or has a malformed entry.
  static HeuristicCache load(const std::string& path);
  // As load, but a missing file gives an empty cache (the tuner's starting point); a corrupt one still throws.
  static HeuristicCache load_or_empty(const std::string& path);
  // Parses a document already read; `origin` names it in errors.
  static HeuristicCache from_json(const nlohmann::json& doc, const std::string& origin);
  nlohmann::json to_json() const;

  // Install a GEMM chooser on `backend` serving the entries whose environment matches
  // backend.device_info() (replacing any chooser installed before). Returns how many entries (GEMM and
  // fused) were skipped because they come from another environment.
  int install(Backend& backend) const;
  // Tuned fused tile for `p` on this environment, if any.
  std::optional<FusedTile> fused_tile(const Problem& p, const DeviceInfo& env) const;
  // Tuned configuration of plugin strategy `strategy` ("plugin:<name>") for `p` on this environment, if any.
  std::optional<std::string> plugin_config(const Problem& p, const std::string& strategy, const DeviceInfo& env) const;
  // Entries (GEMM and fused) whose environment differs from `env`.
  int foreign_entries(const DeviceInfo& env) const;

  // Adding entries (the tuner). An entry replaces one with the same environment and key.
  void add_environment(const CacheEnvironment& e);
  void put_gemm(const GemmCacheEntry& e);   // its environment must have been added
  void put_fused(const FusedCacheEntry& e);
  void put_plugin(const PluginCacheEntry& e);
  // Every entry of `newer` replaces the same (environment, key) here; the others are kept.
  void merge(const HeuristicCache& newer);
  // Merges this cache into the file at `path` (re-read now, so entries written meanwhile survive) and
  // writes the result atomically, all under an exclusive lock on PATH.lock (core/file_lock.hpp), so that
  // concurrent tunes into one cache merge. UsageError when the existing file is corrupt (it is left untouched)
  // or the directory is not writable. Returns the merged cache as written.
  HeuristicCache save(const std::string& path) const;

  const GemmCacheEntry* find_gemm(const std::string& shape_key, const CacheEnvironment& env) const;
  const FusedCacheEntry* find_fused(const Problem& p, const CacheEnvironment& env) const;
  std::vector<GemmCacheEntry> gemm_entries() const;
  std::vector<FusedCacheEntry> fused_entries() const;
  std::vector<PluginCacheEntry> plugin_entries() const;
  std::vector<CacheEnvironment> environments() const;
  bool empty() const { return gemm_.empty() && fused_.empty() && plugins_.empty(); }

 private:
  using Key = std::pair<std::string, std::string>;  // (environment id, entry key)
  std::map<std::string, CacheEnvironment> envs_;
  std::map<Key, GemmCacheEntry> gemm_;
  std::map<Key, FusedCacheEntry> fused_;
  std::map<Key, PluginCacheEntry> plugins_;  // "plugins": tuned plugin configurations (absent in older caches)
};

}  // namespace ab

// Plugin cache entries and the library versions loaded now (cli/cache_library_versions.hpp).
#include "cli/cache_library_versions.hpp"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "strategies/plugin_library.hpp"

namespace ab {

namespace {

// The version of every plugin and peer of this process, by strategy name ("plugin:x", "peer:y").
std::map<std::string, std::string> loaded_library_versions() {
  std::map<std::string, std::string> versions;
  for (const LoadedPlugin& p : loaded_plugins()) versions[p.info.strategy_name()] = p.info.version;
  return versions;
}

}  // namespace

HeuristicCache with_library_versions(HeuristicCache found) {
  const std::map<std::string, std::string> versions = loaded_library_versions();
  for (PluginCacheEntry e : found.plugin_entries()) {
    auto v = versions.find(e.strategy);
    if (!e.library_version.empty() || v == versions.end()) continue;
    e.library_version = v->second;
    found.put_plugin(e);  // replaces the entry of the same environment and key
  }
  return found;
}

std::vector<std::string> drop_entries_of_other_library_versions(HeuristicCache& cache, const DeviceInfo& dev) {
  const std::map<std::string, std::string> versions = loaded_library_versions();
  const std::string here = CacheEnvironment::from_device(dev).id();
  std::map<std::pair<std::string, std::string>, int> dropped;  // (strategy, version tuned) -> entries
  HeuristicCache kept;
  for (const CacheEnvironment& e : cache.environments()) kept.add_environment(e);
  for (const GemmCacheEntry& e : cache.gemm_entries()) kept.put_gemm(e);
  for (const FusedCacheEntry& e : cache.fused_entries()) kept.put_fused(e);
  for (const PluginCacheEntry& e : cache.plugin_entries()) {
    auto loaded = versions.find(e.strategy);
    if (e.env == here && loaded != versions.end() && !e.applies_to_library(loaded->second)) {
      ++dropped[{e.strategy, e.library_version}];
      continue;
    }
    kept.put_plugin(e);
  }
  std::vector<std::string> warnings;
  for (const auto& [what, n] : dropped)
    warnings.push_back(fmt::format("{} cache {} of {} tuned with library version '{}', not the loaded '{}': not applied",
                                   n, n == 1 ? "entry" : "entries", what.first, what.second, versions.at(what.first)));
  if (!dropped.empty()) cache = std::move(kept);
  return warnings;
}

}  // namespace ab

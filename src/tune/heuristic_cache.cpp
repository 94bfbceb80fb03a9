// HeuristicCache: the in-memory cache, its file format, merging, atomic save and the GEMM chooser.
#include "tune/heuristic_cache.hpp"

#include <filesystem>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/file_lock.hpp"
#include "core/json_document.hpp"
#include "tune/problem_key.hpp"
#include "git_info.hpp"  // ATTNBENCH_GIT, generated at build time

namespace ab {

using json = nlohmann::json;

HeuristicCache HeuristicCache::load(const std::string& path) {
  json doc;
  try {
    doc = read_json_document(path, kCacheSchema);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("heuristic cache {}", e.what()));
  }
  return from_json(doc, fmt::format("heuristic cache '{}'", path));
}

HeuristicCache HeuristicCache::load_or_empty(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return HeuristicCache();
  return load(path);
}

HeuristicCache HeuristicCache::from_json(const json& doc, const std::string& origin) {
  HeuristicCache c;
  try {
    if (!doc.is_object()) throw UsageError(fmt::format("{}: not a JSON object", origin));
    if (!doc.contains("schema") || doc["schema"] != kCacheSchema)
      throw UsageError(fmt::format("{}: schema is not '{}'", origin, kCacheSchema));
    auto list = [&](const char* name) -> json {
      auto it = doc.find(name);
      if (it == doc.end()) return json::array();
      if (!it->is_array()) throw UsageError(fmt::format("{}: '{}' must be a list", origin, name));
      return *it;
    };
    json envs = list("environments");
    for (std::size_t i = 0; i < envs.size(); ++i) {
      std::string where = fmt::format("{}: environments[{}]", origin, i);
      CacheEnvironment e = CacheEnvironment::from_json(envs[i], where);
      if (envs[i].contains("id") && envs[i]["id"] != e.id())
        throw UsageError(fmt::format("{}: id '{}' does not match its fields (edited by hand?)", where,
                                     envs[i]["id"].is_string() ? envs[i]["id"].get<std::string>() : "?"));
      c.envs_[e.id()] = e;
    }
    json gemm = list("gemm");
    for (std::size_t i = 0; i < gemm.size(); ++i) {
      std::string where = fmt::format("{}: gemm[{}]", origin, i);
      GemmCacheEntry e = GemmCacheEntry::from_json(gemm[i], where);
      auto env = c.envs_.find(e.env);
      if (env == c.envs_.end())
        throw UsageError(fmt::format("{}: environment '{}' is not in 'environments'", where, e.env));
      if (env->second.backend == "cuda" && e.algo.blob.size() != 64)
        throw UsageError(fmt::format("{}: a cuBLASLt algorithm blob has 64 bytes, this one {}", where, e.algo.blob.size()));
      c.gemm_[{e.env, e.key}] = e;
    }
    json fused = list("fused");
    for (std::size_t i = 0; i < fused.size(); ++i) {
      std::string where = fmt::format("{}: fused[{}]", origin, i);
      FusedCacheEntry e = FusedCacheEntry::from_json(fused[i], where);
      if (!c.envs_.count(e.env))
        throw UsageError(fmt::format("{}: environment '{}' is not in 'environments'", where, e.env));
      c.fused_[{e.env, e.key}] = e;
    }
    json plugins = list("plugins");
    for (std::size_t i = 0; i < plugins.size(); ++i) {
      std::string where = fmt::format("{}: plugins[{}]", origin, i);
      PluginCacheEntry e = PluginCacheEntry::from_json(plugins[i], where);
      if (!c.envs_.count(e.env))
        throw UsageError(fmt::format("{}: environment '{}' is not in 'environments'", where, e.env));
      c.plugins_[{e.env, e.key}] = e;
    }
  } catch (const json::exception&) {  // a field the checks above missed: one line, no library text
    throw UsageError(fmt::format("{}: a field has the wrong type", origin));
  }
  return c;
}

json HeuristicCache::to_json() const {
  json envs = json::array(), gemm = json::array(), fused = json::array();
  for (const auto& [id, e] : envs_) envs.push_back(e.to_json());
  for (const auto& [k, e] : gemm_) gemm.push_back(e.to_json());
  for (const auto& [k, e] : fused_) fused.push_back(e.to_json());
  json plugins = json::array();
  for (const auto& [k, e] : plugins_) plugins.push_back(e.to_json());
  return {{"schema", kCacheSchema},
          {"tool", {{"name", "attnbench"}, {"version", ATTNBENCH_VERSION}, {"git", ATTNBENCH_GIT}}},
          {"environments", envs},
          {"gemm", gemm},
          {"fused", fused},
          {"plugins", plugins}};
}

int HeuristicCache::install(Backend& backend) const {
  DeviceInfo dev = backend.device_info();
  std::string here = CacheEnvironment::from_device(dev).id();
  auto algos = std::make_shared<std::unordered_map<std::string, GemmAlgo>>();
  for (const auto& [k, e] : gemm_)
    if (e.env == here) (*algos)[e.key] = e.algo;
  backend.gemm().set_chooser([algos](const GemmShape& shape, GemmAlgo* algo) {
    auto it = algos->find(shape.key());
    if (it == algos->end()) return false;
    *algo = it->second;
    return true;
  });
  return foreign_entries(dev);
}

std::optional<FusedTile> HeuristicCache::fused_tile(const Problem& p, const DeviceInfo& env) const {
  const FusedCacheEntry* e = find_fused(p, CacheEnvironment::from_device(env));
  if (!e) return std::nullopt;
  return e->tile;
}

std::optional<std::string> HeuristicCache::plugin_config(const Problem& p, const std::string& strategy,
                                                         const DeviceInfo& env) const {
  auto it = plugins_.find({CacheEnvironment::from_device(env).id(), problem_cache_key(p) + "|" + strategy});
  if (it == plugins_.end()) return std::nullopt;
  return it->second.config;
}

int HeuristicCache::foreign_entries(const DeviceInfo& env) const {
  std::string here = CacheEnvironment::from_device(env).id();
  int n = 0;
  for (const auto& [k, e] : gemm_) n += e.env != here;
  for (const auto& [k, e] : fused_) n += e.env != here;
  for (const auto& [k, e] : plugins_) n += e.env != here;
  return n;
}

void HeuristicCache::add_environment(const CacheEnvironment& e) { envs_[e.id()] = e; }

void HeuristicCache::put_gemm(const GemmCacheEntry& e) {
  if (!envs_.count(e.env)) throw std::logic_error("HeuristicCache::put_gemm: unknown environment " + e.env);
  gemm_[{e.env, e.key}] = e;
}

void HeuristicCache::put_fused(const FusedCacheEntry& e) {
  if (!envs_.count(e.env)) throw std::logic_error("HeuristicCache::put_fused: unknown environment " + e.env);
  fused_[{e.env, e.key}] = e;
}

void HeuristicCache::put_plugin(const PluginCacheEntry& e) {
  if (!envs_.count(e.env)) throw std::logic_error("HeuristicCache::put_plugin: unknown environment " + e.env);
  plugins_[{e.env, e.key}] = e;
}

void HeuristicCache::merge(const HeuristicCache& newer) {
  for (const auto& [id, e] : newer.envs_) envs_[id] = e;
  for (const auto& [k, e] : newer.gemm_) gemm_[k] = e;
  for (const auto& [k, e] : newer.fused_) fused_[k] = e;
  for (const auto& [k, e] : newer.plugins_) plugins_[k] = e;
}

HeuristicCache HeuristicCache::save(const std::string& path) const {
  FileLock lock(path);  // re-read, merge and write as one step against other processes saving here
  HeuristicCache merged = load_or_empty(path);
  merged.merge(*this);
  write_json_atomic(path, merged.to_json());
  return merged;
}

const GemmCacheEntry* HeuristicCache::find_gemm(const std::string& shape_key, const CacheEnvironment& env) const {
  auto it = gemm_.find({env.id(), shape_key});
  return it == gemm_.end() ? nullptr : &it->second;
}

const FusedCacheEntry* HeuristicCache::find_fused(const Problem& p, const CacheEnvironment& env) const {
  auto it = fused_.find({env.id(), problem_cache_key(p)});
  return it == fused_.end() ? nullptr : &it->second;
}

std::vector<GemmCacheEntry> HeuristicCache::gemm_entries() const {
  std::vector<GemmCacheEntry> v;
  for (const auto& [k, e] : gemm_) v.push_back(e);
  return v;
}

std::vector<FusedCacheEntry> HeuristicCache::fused_entries() const {
  std::vector<FusedCacheEntry> v;
  for (const auto& [k, e] : fused_) v.push_back(e);
  return v;
}

std::vector<PluginCacheEntry> HeuristicCache::plugin_entries() const {
  std::vector<PluginCacheEntry> v;
  for (const auto& [k, e] : plugins_) v.push_back(e);
  return v;
}

std::vector<CacheEnvironment> HeuristicCache::environments() const {
  std::vector<CacheEnvironment> v;
  for (const auto& [id, e] : envs_) v.push_back(e);
  return v;
}

}  // namespace ab

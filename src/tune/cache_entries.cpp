// JSON for heuristic-cache entries, with strict reading: every malformed field is a one-line UsageError.
#include "tune/cache_entries.hpp"

#include <cctype>
#include <ctime>
#include <type_traits>

#include <fmt/format.h>

#include "core/blob_hex.hpp"
#include "core/errors.hpp"

namespace ab {

namespace {

using json = nlohmann::json;

const json& need(const json& j, const char* name, const std::string& where) {
  if (!j.is_object()) throw UsageError(fmt::format("{}: expected an object", where));
  auto it = j.find(name);
  if (it == j.end()) throw UsageError(fmt::format("{}: field '{}' is missing", where, name));
  return *it;
}

std::string need_string(const json& j, const char* name, const std::string& where) {
  const json& v = need(j, name, where);
  if (!v.is_string()) throw UsageError(fmt::format("{}: field '{}' must be a string", where, name));
  return v.get<std::string>();
}

// A time or ratio: a non-negative number, or null for "unknown" (read as 0).
double need_number(const json& j, const char* name, const std::string& where) {
  const json& v = need(j, name, where);
  if (v.is_null()) return 0;
  if (!v.is_number() || v.get<double>() < 0)
    throw UsageError(fmt::format("{}: field '{}' must be a non-negative number or null", where, name));
  return v.get<double>();
}

int need_int(const json& j, const char* name, const std::string& where) {
  const json& v = need(j, name, where);
  if (!v.is_number_integer()) throw UsageError(fmt::format("{}: field '{}' must be an integer", where, name));
  return v.get<int>();
}

json optional_array(const json& j, const char* name, const std::string& where) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return json::array();
  if (!it->is_array()) throw UsageError(fmt::format("{}: field '{}' must be a list", where, name));
  return *it;
}

// An optional field of a given type: `fallback` when absent, UsageError naming it when mistyped.
template <class V>
V optional_field(const json& j, const char* name, const std::string& where, V fallback) {
  auto it = j.find(name);
  if (it == j.end()) return fallback;
  bool ok = std::is_same<V, std::string>::value ? it->is_string()
            : std::is_same<V, json>::value      ? it->is_object()
            : std::is_same<V, bool>::value      ? it->is_boolean()
                                                : it->is_number_integer();
  if (!ok) throw UsageError(fmt::format("{}: field '{}' must be {}", where, name,
                                        std::is_same<V, std::string>::value ? "a string"
                                        : std::is_same<V, json>::value      ? "an object"
                                        : std::is_same<V, bool>::value      ? "true or false"
                                                                            : "an integer"));
  return it->template get<V>();
}

json number_or_null(double v) { return v > 0 ? json(v) : json(nullptr); }


}  // namespace


FusedTile fused_tile_from_json(const json& j, const std::string& where) {
  return FusedTile::from_json(j, [&](const std::string& field, const std::string& what) {
    throw UsageError(field.empty() ? fmt::format("{}: {}", where, what) : fmt::format("{}: field '{}' {}", where, field, what));
  });
}

json GemmCacheEntry::to_json() const {
  return {{"env", env},
          {"key", key},
          {"shape", shape},
          {"algo", algo.to_json()},
          {"best_ms", best_ms},
          {"heuristic_ms", number_or_null(heuristic_ms)},
          {"gain", number_or_null(gain)},
          {"heuristic_algo", heuristic_algo},
          {"candidates", candidates},
          {"failed", failed},
          {"failures", failures},
          {"search", search},
          {"top", top},
          {"measured_with", measured_with},
          {"tuned_at", tuned_at}};
}

GemmCacheEntry GemmCacheEntry::from_json(const json& j, const std::string& where) {
  GemmCacheEntry e;
  e.env = need_string(j, "env", where);
  e.key = need_string(j, "key", where);
  e.shape = need(j, "shape", where);
  const json& a = need(j, "algo", where);
  if (!a.is_object()) throw UsageError(fmt::format("{}: 'algo' must be an object", where));
  if (a.contains("attrs") && !a["attrs"].is_object())
    throw UsageError(fmt::format("{}: 'algo.attrs' must be an object", where));
  optional_field(a, "label", where + ".algo", std::string());
  optional_field(a, "heuristic_first", where + ".algo", false);
  std::string blob = a.contains("blob") ? (a["blob"].is_string() ? a["blob"].get<std::string>() : "!") : "";
  if (!is_blob_hex(blob)) throw UsageError(fmt::format("{}: 'algo.blob' must be a string of hex byte pairs", where));
  try {
    e.algo = GemmAlgo::from_json(a);
  } catch (const std::exception& ex) {
    throw UsageError(fmt::format("{}: malformed 'algo' ({})", where, ex.what()));
  }
  e.best_ms = need_number(j, "best_ms", where);
  if (e.best_ms <= 0) throw UsageError(fmt::format("{}: 'best_ms' must be positive", where));
  e.heuristic_ms = need_number(j, "heuristic_ms", where);
  e.gain = need_number(j, "gain", where);
  e.heuristic_algo = optional_field(j, "heuristic_algo", where, std::string());
  e.candidates = need_int(j, "candidates", where);
  e.failed = need_int(j, "failed", where);
  e.failures = optional_array(j, "failures", where);
  e.search = optional_field(j, "search", where, std::string());
  e.top = static_cast<int>(optional_field<std::int64_t>(j, "top", where, 0));
  e.measured_with = optional_field(j, "measured_with", where, json::object());
  e.tuned_at = optional_field(j, "tuned_at", where, std::string());
  return e;
}

json FusedCacheEntry::to_json() const {
  return {{"env", env},
          {"key", key},
          {"problem", problem},
          {"tile", tile.to_json()},
          {"best_ms", best_ms},
          {"default_ms", number_or_null(default_ms)},
          {"gain", number_or_null(gain)},
          {"default_tile", default_tile},
          {"best_noise", best_noise},
          {"candidates", candidates},
          {"failed", failed},
          {"failures", failures},
          {"tuned_at", tuned_at}};
}

FusedCacheEntry FusedCacheEntry::from_json(const json& j, const std::string& where) {
  FusedCacheEntry e;
  e.env = need_string(j, "env", where);
  e.key = need_string(j, "key", where);
  e.problem = optional_field(j, "problem", where, json::object());
  e.tile = fused_tile_from_json(need(j, "tile", where), where + ".tile");
  e.best_ms = need_number(j, "best_ms", where);
  if (e.best_ms <= 0) throw UsageError(fmt::format("{}: 'best_ms' must be positive", where));
  e.default_ms = need_number(j, "default_ms", where);
  e.gain = need_number(j, "gain", where);
  e.default_tile = optional_field(j, "default_tile", where, std::string());
  if (j.contains("best_noise")) e.best_noise = need_number(j, "best_noise", where);
  e.candidates = need_int(j, "candidates", where);
  e.failed = need_int(j, "failed", where);
  e.failures = optional_array(j, "failures", where);
  e.tuned_at = optional_field(j, "tuned_at", where, std::string());
  return e;
}

json PluginCacheEntry::to_json() const {
  json j = {{"env", env},          {"key", key},
            {"strategy", strategy}, {"problem", problem},
            {"config", config},     {"best_ms", best_ms},
            {"default_ms", number_or_null(default_ms)}, {"default_config", default_config},
            {"candidates", candidates}, {"failed", failed},
            {"tuned_at", tuned_at}};
  if (!library_version.empty()) j["library_version"] = library_version;
  return j;
}

PluginCacheEntry PluginCacheEntry::from_json(const json& j, const std::string& where) {
  PluginCacheEntry e;
  e.env = need_string(j, "env", where);
  e.key = need_string(j, "key", where);
  e.strategy = need_string(j, "strategy", where);
  e.problem = optional_field(j, "problem", where, json::object());
  e.config = need_string(j, "config", where);
  e.best_ms = need_number(j, "best_ms", where);
  if (e.best_ms <= 0) throw UsageError(fmt::format("{}: 'best_ms' must be positive", where));
  e.default_ms = need_number(j, "default_ms", where);
  e.default_config = optional_field(j, "default_config", where, std::string());
  e.candidates = need_int(j, "candidates", where);
  e.failed = need_int(j, "failed", where);
  e.tuned_at = optional_field(j, "tuned_at", where, std::string());
  e.library_version = optional_field(j, "library_version", where, std::string());  // absent in older caches
  return e;
}

}  // namespace ab

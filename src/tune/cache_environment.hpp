// The environment a heuristic-cache entry was tuned on (backend, GPU, cc, driver, CUDA runtime, cuBLASLt).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/backend.hpp"

namespace ab {

// Entries only apply where every field matches: a cuBLASLt algorithm blob is only meaningful for the GPU,
// driver and library that produced it. A plugin's or peer's entry also records the version of the library it
// tuned, and applies only to that version (PluginCacheEntry::applies_to_library, tune/cache_entries.hpp).
struct CacheEnvironment {
  std::string backend;  // "cuda" or "cpu"
  std::string gpu;      // DeviceInfo::name
  std::string cc;       // "9.0"
  std::string driver, cuda_runtime, cublaslt;

  static CacheEnvironment from_device(const DeviceInfo& d);
  // Stable short id derived from every field ("env-" + 12 hex digits); the same environment gets the
  // same id in every file, so merging files keeps one environment record.
  std::string id() const;
  std::string describe() const;  // "NVIDIA H100 80GB HBM3 (cc 9.0, driver 550.54, CUDA 12.4, cuBLASLt 120402)"
  nlohmann::json to_json() const;
  // Throws UsageError naming `where` when a field is missing or not a string.
  static CacheEnvironment from_json(const nlohmann::json& j, const std::string& where);
  bool operator==(const CacheEnvironment& o) const;
  bool operator!=(const CacheEnvironment& o) const { return !(*this == o); }
};

}  // namespace ab

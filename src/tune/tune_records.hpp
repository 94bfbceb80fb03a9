// Turning the tuner's records into heuristic-cache entries.
#pragma once
#include "tune/cache_entries.hpp"
#include "tune/tune_types.hpp"

namespace ab {

// Only for records with a winner (best >= 0).
GemmCacheEntry make_gemm_entry(const GemmTuneRecord& r, const CacheEnvironment& env, const TuneOptions& opt,
                               const std::string& tuned_at);
FusedCacheEntry make_fused_entry(const FusedTuneRecord& r, const CacheEnvironment& env, const std::string& tuned_at);
// The cache entry of a plugin record with a winner.
PluginCacheEntry make_plugin_entry(const PluginTuneRecord& r, const CacheEnvironment& env, const std::string& tuned_at);

}  // namespace ab

// The library versions of the loaded plugins and peers (their tables' `version`) beside the heuristic cache's
// plugin entries: a tune records in each plugin entry it writes the version it tuned, and a run applies an entry
// only to that version (PluginCacheEntry::applies_to_library), as it applies entries only on their environment.
#pragma once
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "tune/heuristic_cache.hpp"

namespace ab {

// `found` (a tune's own entries) with each plugin entry that records no library version given the version of
// its plugin or peer loaded in this process.
HeuristicCache with_library_versions(HeuristicCache found);

// Removes from `cache` the plugin entries of this environment (`dev`) that were tuned with another version of a
// plugin or peer loaded now. Returns one warning per (strategy, version tuned) saying how many were not applied.
std::vector<std::string> drop_entries_of_other_library_versions(HeuristicCache& cache, const DeviceInfo& dev);

}  // namespace ab

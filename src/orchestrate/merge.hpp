// `attnbench merge`'s two halves: reports (attnbench.report/1, e.g. the shards of a grid) and heuristic caches
// (attnbench.cache/1, e.g. the shards of a tune). Each takes the parsed input documents with their paths and
// returns the merged document, or throws UsageError (one line) when the inputs do not belong together.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ab {

struct MergeInput {
  std::string path;
  nlohmann::json doc;
};

// Reports: same tool version, settings and device model; none interrupted; no row (problem, strategy) twice;
// shards of one count and grid, each at most once. Rows are copied as they are (a row's device included);
// when the inputs ran on different devices a row without its own "device" gets its input's. The rows of
// shard reports come out in grid order. `notes` gets what the caller should say (shards missing).
nlohmann::json merge_reports(const std::vector<MergeInput>& inputs, const std::string& command,
                             std::vector<std::string>* notes);

// Caches: same tool version; an entry (environment, key) in two inputs must agree on its choice (the same
// algorithm or tile; the faster measurement is kept) unless `keep_fastest`, which keeps the faster of two
// different choices. `notes` gets each conflict so resolved.
nlohmann::json merge_caches(const std::vector<MergeInput>& inputs, bool keep_fastest, std::vector<std::string>* notes);

}  // namespace ab

// A grid of problems: the product of every axis of core/problem_axes.hpp, from command-line flags or from a
// named suite in configs/.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/problem.hpp"

namespace ab {

// Axis texts in the axis grammar (see axis.hpp), by axis name; an axis not in the map takes its default.
// Giving page_size (even alongside pages, as a suite may) stands in for pages.
struct GridSpec {
  std::map<std::string, std::string> text;
  GridSpec& set(const std::string& axis, const std::string& value);  // throws UsageError for an unknown axis
};

// Expands a spec into problems; throws UsageError on any malformed axis or invalid problem. Without a batch
// axis, a list or file of --kv_lens lengths sets the batch. `notes` (when given) receives, once each, the
// choices made for the user: that batch, a lengths file longer than the batch.
std::vector<Problem> expand_grid(const GridSpec& spec, std::vector<std::string>* notes = nullptr);

// Loads a suite file (attnbench.suite/1 JSON: {"name", "description", "grids": [GridSpec-like objects]}, and
// optionally "plugins" and "peers", which the command line's flag readers take: cli/plugin_flags, cli/peer_flags).
// Throws UsageError for a missing or malformed file, naming the file and the problem. `overrides`: axes that
// replace the suite's own in every grid (the size flags given beside --config); problems they make identical
// run once, said in `notes`. `path` may list several suites ("a,b,c"): their problems in that order, one
// that is in more than one suite run once (a note says how many), and `suite_name` "a+b+c".
std::vector<Problem> load_suite(const std::string& path, std::string* suite_name = nullptr,
                                const GridSpec* overrides = nullptr, std::vector<std::string>* notes = nullptr);
// The suites a --config value names: "a,b,c" as its names, one name otherwise (a path that exists is one name
// even when it holds a comma). Throws UsageError on an empty name.
std::vector<std::string> suite_names(const std::string& config);
// The same from a parsed document; `path` names it in errors.
std::vector<Problem> suite_from_json(const nlohmann::json& j, const std::string& path, std::string* suite_name = nullptr,
                                     const GridSpec* overrides = nullptr, std::vector<std::string>* notes = nullptr);

// Where suites are looked up by name, in order: <binary>/../share/attnbench/configs (an installed binary), the
// source tree's configs/ (a build tree), then ./configs. The one definition of that search.
std::vector<std::string> suite_search_dirs();

// Resolves a suite name ("ci", "bert-base") to <dir>/<name>.json in the first of suite_search_dirs() that has
// it; an existing file, or a name with a '/' or ".json", passes through as a path. A bare name found nowhere
// throws UsageError naming the folders searched.
std::string resolve_suite_path(const std::string& name_or_path);

}  // namespace ab

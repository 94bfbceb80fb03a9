// A grid of problems: the product of every axis, from command-line flags or from a named suite in configs/.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/problem.hpp"

namespace ab {

// Axes as text in the axis grammar (see axis.hpp). Empty page_size means "use pages".
struct GridSpec {
  std::string batch = "32";
  std::string heads = "12";
  std::string seq_len = "512";
  std::string head_dim = "64";
  std::string pages = "1";
  std::string page_size;  // alternative to pages
  std::string kv_layout = "contiguous";  // list allowed
  std::string dtype = "fp16";            // list allowed
  std::string causal = "false";          // "false", "true" or "false,true"
};

// Expands a spec into problems; throws UsageError on any malformed axis or invalid problem.
std::vector<Problem> expand_grid(const GridSpec& spec);

// Loads a suite file (attnbench.suite/1 JSON: {"name", "description", "grids": [GridSpec-like objects]}).
// Throws UsageError for a missing or malformed file, naming the file and the problem.
std::vector<Problem> load_suite(const std::string& path, std::string* suite_name = nullptr);
// The same from a parsed document; `path` names it in errors.
std::vector<Problem> suite_from_json(const nlohmann::json& j, const std::string& path, std::string* suite_name = nullptr);

// Resolves "ci" or "bert-base" to configs/<name>.json beside the source tree or the binary; paths pass through.
std::string resolve_suite_path(const std::string& name_or_path);

}  // namespace ab

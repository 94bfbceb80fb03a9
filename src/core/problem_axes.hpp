// A problem's identity at the edges: its label, its key (what matches rows across reports), its report JSON
// and its CSV columns. (Helper "axes-cli" replaces this file with the table of problem axes; code here uses
// only these declarations.)
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/problem.hpp"

namespace ab {

std::string problem_label(const Problem&);
std::string problem_key(const Problem&);
nlohmann::json problem_to_json(const Problem&);
Problem problem_from_json(const nlohmann::json&, const std::string& origin);  // throws UsageError
std::vector<std::string> problem_csv_columns();
std::vector<std::string> problem_csv_cells(const Problem&);

}  // namespace ab

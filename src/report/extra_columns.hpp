// The columns a row carries beyond the console table (host time, the configuration that ran, the launch
// formula and kernels, the verification tolerance, an injected slowdown): one list of (name, text) shared by
// the CSV and the flat JSON rows, so both carry the same columns under the same names.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "run/result_row.hpp"

namespace ab {

// Column names, in order (the CSV header's tail; keys of the flat rows).
std::vector<std::string> extra_column_names();
// The row's cells in the order of extra_column_names(); "" where the row has no value.
std::vector<std::string> extra_column_cells(const ResultRow& row);

}  // namespace ab

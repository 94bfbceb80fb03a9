// Splitting and trimming of flag and file text, shared by the axis parsers (axis.cpp) and the --kv_lens
// specs (kv_lengths.cpp).
#pragma once

#include <string>
#include <vector>

namespace ab {

// The pieces of `s` between each `sep`, empty pieces kept ("a,,b" gives 3; "" gives one empty piece).
std::vector<std::string> split_text(const std::string& s, char sep);

// `s` without leading and trailing white space (std::isspace).
std::string trim_text(const std::string& s);

}  // namespace ab

// Parsing of one size axis: a value ("512"), a list ("1,8,32"), a geometric range ("128:4096:*2"),
// an arithmetic range ("64:256:+64", or "64:256" with step +1), and lists of those ("64,128:512:*2").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ab {

// Throws UsageError naming `axis` and the offending text on anything malformed, empty, zero, negative or
// listed twice.
std::vector<std::int64_t> parse_axis(const std::string& axis, const std::string& text);

// Comma-separated words ("fp16,bf16"); throws UsageError on an empty list or item, or a word listed twice.
std::vector<std::string> split_list(const std::string& axis, const std::string& text);

}  // namespace ab

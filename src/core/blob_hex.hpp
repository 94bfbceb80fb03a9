// The one text form of a GEMM algorithm blob (cuBLASLt's opaque algorithm bytes) in reports and caches:
// lower-case hex byte pairs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ab {

// {0x0a, 0xff} -> "0aff".
std::string blob_to_hex(const std::vector<std::uint8_t>& blob);
// True when `text` is an even number of hex digits (either case); "" is a valid, empty blob.
bool is_blob_hex(const std::string& text);
// "0aFF" -> {0x0a, 0xff}; false (and `blob` untouched) unless is_blob_hex(text).
bool blob_from_hex(const std::string& text, std::vector<std::uint8_t>* blob);

}  // namespace ab

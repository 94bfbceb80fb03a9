// FNV-1a, 64 bits: the one non-cryptographic hash behind fingerprints, digests and checksums (grids, length
// lists, cache environments, journal lines). Stable across machines and builds.
#pragma once
#include <cstdint>
#include <string_view>

namespace ab {

inline constexpr std::uint64_t kFnvBasis = 1469598103934665603ull;
inline constexpr std::uint64_t kFnvPrime = 1099511628211ull;

inline std::uint64_t fnv1a_byte(std::uint64_t h, unsigned char c) { return (h ^ c) * kFnvPrime; }

inline std::uint64_t fnv1a(std::string_view text, std::uint64_t h = kFnvBasis) {
  for (unsigned char c : text) h = fnv1a_byte(h, c);
  return h;
}

}  // namespace ab

// Overflow-safe size arithmetic for element and byte counts: products and sums of non-negative sizes that
// saturate at kSizeSaturated instead of wrapping, so that an estimate compared with a limit is never
// smaller than the truth; and sizes as text ("1.50 GiB", "more than 8 EiB" when saturated).
#pragma once
#include <cstdint>
#include <limits>
#include <string>

namespace ab {

inline constexpr std::int64_t kSizeSaturated = std::numeric_limits<std::int64_t>::max();

// a·b for a, b >= 0; kSizeSaturated when the product does not fit (or either factor already saturated).
inline std::int64_t size_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (a == kSizeSaturated || b == kSizeSaturated || __builtin_mul_overflow(a, b, &r)) return a && b ? kSizeSaturated : 0;
  return r;
}
template <class... Rest>
std::int64_t size_mul(std::int64_t a, std::int64_t b, Rest... rest) {
  return size_mul(size_mul(a, b), static_cast<std::int64_t>(rest)...);
}

// a+b for a, b >= 0, saturating.
inline std::int64_t size_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (a == kSizeSaturated || b == kSizeSaturated || __builtin_add_overflow(a, b, &r)) return kSizeSaturated;
  return r;
}
template <class... Rest>
std::int64_t size_add(std::int64_t a, std::int64_t b, Rest... rest) {
  return size_add(size_add(a, b), static_cast<std::int64_t>(rest)...);
}

// "512 B", "1.50 GiB", "3.00 EiB"; a saturated count reads "more than 8 EiB".
std::string human_bytes(double bytes);
std::string human_bytes_saturating(std::int64_t bytes);

}  // namespace ab

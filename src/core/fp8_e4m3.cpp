// FP8 E4M3 conversions on the host (core/fp8_e4m3.hpp): decode by the format's fields, encode by the nearest of
// the 127 positive finite values (a binary search over them: obviously the format's rounding, ties to even).
#include "core/fp8_e4m3.hpp"

#include <array>
#include <cmath>
#include <limits>

namespace ab {

float e4m3_bits_to_float(std::uint8_t bits) {
  const int exponent = (bits >> 3) & 0xF, mantissa = bits & 0x7;
  const float sign = (bits & 0x80) ? -1.0f : 1.0f;
  if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<float>::quiet_NaN();
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);  // subnormal: m * 2^-9
  return sign * std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
}

namespace {
// The positive finite values by code, 0x00 (0) .. 0x7e (448): ascending.
const std::array<float, 127>& positive_values() {
  static const std::array<float, 127> v = [] {
    std::array<float, 127> a{};
    for (int c = 0; c < 127; ++c) a[static_cast<std::size_t>(c)] = e4m3_bits_to_float(static_cast<std::uint8_t>(c));
    return a;
  }();
  return v;
}
}  // namespace

std::uint8_t float_to_e4m3_bits(float f) {
  if (std::isnan(f)) return 0x7f;
  const std::uint8_t sign = std::signbit(f) ? 0x80 : 0x00;
  const float a = std::fabs(f);
  if (a >= kE4m3Max) return static_cast<std::uint8_t>(sign | 0x7e);  // satfinite
  const auto& v = positive_values();
  int lo = 0, hi = 126;  // v[lo] <= a < v[hi]
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (v[static_cast<std::size_t>(mid)] <= a) lo = mid;
    else hi = mid;
  }
  const float below = a - v[static_cast<std::size_t>(lo)], above = v[static_cast<std::size_t>(hi)] - a;
  const int code = below < above ? lo : above < below ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<std::uint8_t>(sign | code);
}

}  // namespace ab

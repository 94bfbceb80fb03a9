// FP8 E4M3 on the host (core/fp8_e4m3.hpp): the format's known values, every code read back to itself, rounding
// to the nearest value with ties to the even code at every midpoint, saturation to +-448, NaN, signed zero, and
// the relative error bound of a value in the normal range (2^-4: three mantissa bits, half an ulp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "core/fp8_e4m3.hpp"

using namespace ab;

TEST(Fp8E4m3, KnownValues) {
  EXPECT_EQ(e4m3_bits_to_float(0x38), 1.0f);     // 0 0111 000
  EXPECT_EQ(e4m3_bits_to_float(0x30), 0.5f);
  EXPECT_EQ(e4m3_bits_to_float(0x7e), 448.0f);   // 0 1111 110: the largest finite
  EXPECT_EQ(e4m3_bits_to_float(0x08), 0.015625f);  // 2^-6: the smallest normal
  EXPECT_EQ(e4m3_bits_to_float(0x01), std::ldexp(1.0f, -9));  // the smallest subnormal
  EXPECT_EQ(e4m3_bits_to_float(0xb8), -1.0f);
  EXPECT_TRUE(std::isnan(e4m3_bits_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(e4m3_bits_to_float(0xff)));
  EXPECT_EQ(float_to_e4m3_bits(1.0f), 0x38);
  EXPECT_EQ(float_to_e4m3_bits(-448.0f), 0xfe);
}

TEST(Fp8E4m3, EveryCodeReadsBackToItself) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7f) == 0x7f) continue;  // NaN
    const auto code = static_cast<std::uint8_t>(c);
    EXPECT_EQ(float_to_e4m3_bits(e4m3_bits_to_float(code)), code) << c;
  }
}

TEST(Fp8E4m3, NearestWithTiesToTheEvenCode) {
  for (int c = 0; c < 126; ++c) {
    const float lo = e4m3_bits_to_float(static_cast<std::uint8_t>(c));
    const float hi = e4m3_bits_to_float(static_cast<std::uint8_t>(c + 1));
    const float mid = 0.5f * (lo + hi);  // exact in fp32
    EXPECT_EQ(float_to_e4m3_bits(mid), c % 2 == 0 ? c : c + 1) << lo << " .. " << hi;
    EXPECT_EQ(float_to_e4m3_bits(std::nextafter(mid, lo)), c) << mid;
    EXPECT_EQ(float_to_e4m3_bits(std::nextafter(mid, hi)), c + 1) << mid;
    EXPECT_EQ(float_to_e4m3_bits(-std::nextafter(mid, hi)), 0x80 | (c + 1)) << mid;
  }
}

TEST(Fp8E4m3, SaturatesNanAndSignedZero) {
  EXPECT_EQ(float_to_e4m3_bits(460.0f), 0x7e);
  EXPECT_EQ(float_to_e4m3_bits(1e30f), 0x7e);
  EXPECT_EQ(float_to_e4m3_bits(-INFINITY), 0xfe);
  EXPECT_EQ(float_to_e4m3_bits(NAN), 0x7f);
  EXPECT_EQ(float_to_e4m3_bits(0.0f), 0x00);
  EXPECT_EQ(float_to_e4m3_bits(-0.0f), 0x80);
  EXPECT_EQ(float_to_e4m3_bits(std::ldexp(1.0f, -11)), 0x00);  // a quarter of the smallest subnormal: to zero
}

TEST(Fp8E4m3, RelativeErrorInTheNormalRange) {
  std::mt19937 rng(46);
  std::uniform_real_distribution<float> exponent(-6.0f, 8.7f);
  for (int i = 0; i < 100000; ++i) {
    const float x = std::exp2(exponent(rng)) * (i % 2 ? -1.0f : 1.0f);
    const float y = e4m3_bits_to_float(float_to_e4m3_bits(x));
    EXPECT_LE(std::fabs(y - x), std::ldexp(std::fabs(x), -4) * 1.0001f) << x;
  }
}

// The host FP8 E4M3 conversions (core/fp8_e4m3.hpp) against CUDA's own (cuda_fp8.h, the conversion the kernels'
// cvt.rn.satfinite.e4m3x2.f32 performs): every code decoded alike, and encoding alike on every midpoint between
// neighbouring values and its two neighbouring floats, and on a million random floats across the range (subnormal,
// normal, past 448, NaN). Host code only: it runs without a device in a CUDA build.
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "core/fp8_e4m3.hpp"

using namespace ab;

namespace {

std::uint8_t cuda_encode(float f) {
  return static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3));
}
float cuda_decode(std::uint8_t b) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(b), __NV_E4M3);
  return __half2float(__half(h));
}

}  // namespace

TEST(CudaFp8, DecodeMatchesCuda) {
  for (int c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    const float ours = e4m3_bits_to_float(code), theirs = cuda_decode(code);
    if (std::isnan(theirs)) EXPECT_TRUE(std::isnan(ours)) << c;
    else EXPECT_EQ(ours, theirs) << c;
  }
}

TEST(CudaFp8, EncodeMatchesCuda) {
  int checked = 0;
  for (int c = 0; c < 126; ++c) {
    const float lo = e4m3_bits_to_float(static_cast<std::uint8_t>(c)), hi = e4m3_bits_to_float(static_cast<std::uint8_t>(c + 1));
    const float mid = 0.5f * (lo + hi);
    for (float x : {mid, std::nextafter(mid, lo), std::nextafter(mid, hi), lo, hi})
      for (float s : {1.0f, -1.0f}) {
        EXPECT_EQ(float_to_e4m3_bits(s * x), cuda_encode(s * x)) << s * x;
        ++checked;
      }
  }
  std::mt19937 rng(46);
  std::uniform_real_distribution<float> exponent(-14.0f, 12.0f);
  for (int i = 0; i < 1000000; ++i) {
    const float x = std::exp2(exponent(rng)) * (i % 2 ? -1.0f : 1.0f);
    ASSERT_EQ(float_to_e4m3_bits(x), cuda_encode(x)) << x;
    ++checked;
  }
  for (float x : {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 448.0f, 464.0f, 1e30f}) {
    const std::uint8_t theirs = cuda_encode(x);
    if ((theirs & 0x7f) == 0x7f) EXPECT_EQ(float_to_e4m3_bits(x) & 0x7f, 0x7f) << x;  // NaN: the sign is free
    else EXPECT_EQ(float_to_e4m3_bits(x), theirs) << x;
  }
  EXPECT_GT(checked, 1000000);
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

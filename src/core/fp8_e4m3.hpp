// FP8 E4M3 (OCP's E4M3FN, NVIDIA's __nv_fp8_e4m3) on the host: 1 sign, 4 exponent bits (bias 7), 3 mantissa bits,
// no infinities, one NaN pattern a sign (S.1111.111), largest finite 448, smallest subnormal 2^-9. What an FP8 K/V
// cache stores (issue 46): the inputs quantize to it and the references read it back. No CUDA.
#pragma once
#include <cstdint>

namespace ab {

inline constexpr float kE4m3Max = 448.0f;

// The value of an E4M3 code (NaN for 0x7f and 0xff).
float e4m3_bits_to_float(std::uint8_t bits);
// The E4M3 code nearest to f, ties to the even code; saturating to +-448 as the hardware's satfinite conversion
// (cvt.rn.satfinite.e4m3x2.f32) does; NaN to 0x7f.
std::uint8_t float_to_e4m3_bits(float f);

}  // namespace ab

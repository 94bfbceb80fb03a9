// Host-side conversions between float and the 16-bit formats, round-to-nearest-even, NaN preserved.
#include "core/dtype.hpp"

#include <cmath>
#include <cstring>

namespace ab {

std::size_t dtype_size(DType t) { return t == DType::fp32 ? 4 : 2; }

const char* dtype_name(DType t) {
  switch (t) {
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::fp32: return "fp32";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "fp16" || s == "half" || s == "float16") return DType::fp16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  return std::nullopt;
}

std::optional<DType> dtype_from_name(std::string_view s) {
  for (DType t : {DType::fp16, DType::bf16, DType::fp32})
    if (s == dtype_name(t)) return t;
  return std::nullopt;
}

static std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::uint16_t float_to_half_bits(float f) {
  std::uint32_t x = bits_of(f);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t exp = (x >> 23) & 0xffu;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    int shift = 14 - e;
    std::uint32_t half_mant = mant >> shift;
    std::uint32_t rem = mant & ((1u << shift) - 1);
    std::uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) half_mant++;
    return static_cast<std::uint16_t>(sign | half_mant);
  }
  std::uint32_t h = sign | (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
  return static_cast<std::uint16_t>(h);
}

float half_bits_to_float(std::uint16_t h) {
  std::uint32_t sign = (h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return float_of(sign);
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return float_of(sign | 0x7f800000u | (mant << 13));
  return float_of(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  std::uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<std::uint16_t>(x >> 16);
}

std::uint16_t float_to_bits(float f, DType t) {
  return t == DType::bf16 ? float_to_bf16_bits(f) : float_to_half_bits(f);
}

float bf16_bits_to_float(std::uint16_t b) { return float_of(static_cast<std::uint32_t>(b) << 16); }

double load_element(const void* base, std::int64_t idx, DType t) {
  switch (t) {
    case DType::fp16: return half_bits_to_float(static_cast<const std::uint16_t*>(base)[idx]);
    case DType::bf16: return bf16_bits_to_float(static_cast<const std::uint16_t*>(base)[idx]);
    case DType::fp32: return static_cast<const float*>(base)[idx];
  }
  return 0;
}

void store_element(void* base, std::int64_t idx, DType t, double v) {
  switch (t) {
    case DType::fp16: static_cast<std::uint16_t*>(base)[idx] = float_to_half_bits(static_cast<float>(v)); return;
    case DType::bf16: static_cast<std::uint16_t*>(base)[idx] = float_to_bf16_bits(static_cast<float>(v)); return;
    case DType::fp32: static_cast<float*>(base)[idx] = static_cast<float>(v); return;
  }
}

double round_to(DType t, double v) {
  switch (t) {
    case DType::fp16: return half_bits_to_float(float_to_half_bits(static_cast<float>(v)));
    case DType::bf16: return bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(v)));
    case DType::fp32: return static_cast<float>(v);
  }
  return v;
}

}  // namespace ab

// Element types of attention tensors and host-side fp16/bf16 conversion (no CUDA headers needed).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ab {

enum class DType { fp16, bf16, fp32 };

std::size_t dtype_size(DType t);
const char* dtype_name(DType t);
// An input dtype as the --dtype flag spells it (fp16, bf16 and their aliases; fp32 is no input type).
std::optional<DType> parse_dtype(std::string_view s);
// The inverse of dtype_name, for every type (fp32 included).
std::optional<DType> dtype_from_name(std::string_view s);

std::uint16_t float_to_half_bits(float f);
float half_bits_to_float(std::uint16_t h);
std::uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(std::uint16_t b);
// A float's bits in a 16-bit input type (fp16 or bf16: round to nearest even).
std::uint16_t float_to_bits(float f, DType t);

// Read/write element `idx` of a host array of type `t`.
double load_element(const void* base, std::int64_t idx, DType t);
void store_element(void* base, std::int64_t idx, DType t, double v);

// Round a value to what type `t` can hold.
double round_to(DType t, double v);

}  // namespace ab

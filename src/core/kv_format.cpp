// Names of the K/V cache formats and scale granularities (core/kv_format.hpp).
#include "core/kv_format.hpp"

namespace ab {

std::optional<KvFormat> parse_kv_format(std::string_view s) {
  if (s == "fp8_e4m3" || s == "e4m3" || s == "fp8") return KvFormat::fp8_e4m3;
  if (s == "auto" || s == "native") return KvFormat::native;
  return std::nullopt;
}

const char* kv_format_name(KvFormat f) { return f == KvFormat::fp8_e4m3 ? "fp8_e4m3" : "auto"; }

std::optional<KvScale> parse_kv_scale(std::string_view s) {
  if (s == "tensor") return KvScale::tensor;
  if (s == "head") return KvScale::head;
  return std::nullopt;
}

const char* kv_scale_name(KvScale s) { return s == KvScale::head ? "head" : "tensor"; }

}  // namespace ab

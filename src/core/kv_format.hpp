// The storage format of a problem's K/V cache (issue 46): the Q and O dtype itself (--dtype), or FP8 E4M3 with a
// dequantization scale per tensor or per KV head, as vLLM, SGLang and TensorRT-LLM keep their caches. Names as
// the --kv_dtype and --kv_scale flags, the report's JSON and the suites spell them. No CUDA.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace ab {

enum class KvFormat { native, fp8_e4m3 };
enum class KvScale { tensor, head };

// "fp8_e4m3" (also "e4m3", "fp8"), or "auto" for the Q dtype itself (also "native"); nullopt otherwise.
std::optional<KvFormat> parse_kv_format(std::string_view s);
const char* kv_format_name(KvFormat f);  // "auto", "fp8_e4m3"
std::optional<KvScale> parse_kv_scale(std::string_view s);  // "tensor", "head"
const char* kv_scale_name(KvScale s);
// Bytes a stored K or V element takes: 1 for FP8, else the Q dtype's (dtype_bytes).
inline double kv_element_bytes(KvFormat f, double dtype_bytes) { return f == KvFormat::fp8_e4m3 ? 1.0 : dtype_bytes; }
// The fp32 scales an FP8 cache carries (one for K and one for V, per tensor or per KV head); 0 without FP8.
inline std::int64_t kv_scale_count(KvFormat f, KvScale s, std::int64_t kv_heads) {
  if (f != KvFormat::fp8_e4m3) return 0;
  return 2 * (s == KvScale::head ? kv_heads : 1);
}

}  // namespace ab

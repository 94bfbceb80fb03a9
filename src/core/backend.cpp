// Out-of-line pieces of the backend seam: names, keys and JSON forms of its value types, the default delay.
#include "core/backend.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "core/blob_hex.hpp"

#include "core/errors.hpp"

namespace ab {

void Profiler::enqueue_delay(double) { throw BackendError("this backend cannot enqueue delays"); }

const char* backend_kind_name(BackendKind k) { return k == BackendKind::cuda ? "cuda" : "cpu"; }

const char* batch_mode_name(BatchMode m) {
  switch (m) {
    case BatchMode::single: return "single";
    case BatchMode::strided: return "strided";
    case BatchMode::pointer_array: return "pointer_array";
  }
  return "?";
}

nlohmann::json DeviceInfo::to_json() const {
  nlohmann::json j = {{"backend", backend},
                      {"name", name},
                      {"cc", fmt::format("{}.{}", cc_major, cc_minor)},
                      {"sm_count", sm_count},
                      {"l2_bytes", l2_bytes},
                      {"memory_bytes", memory_bytes},
                      {"driver", driver},
                      {"cuda_runtime", cuda_runtime},
                      {"cublaslt", cublaslt},
                      {"clock_mhz", clock_mhz_max},
                      {"mem_clock_mhz", mem_clock_mhz}};
  if (copy_bandwidth_gbps > 0) j["copy_bandwidth_gbps"] = copy_bandwidth_gbps;
  if (peak_tflops > 0) j["peak_tflops"] = peak_tflops;
  return j;
}

std::string GemmShape::key() const {
  return fmt::format("m{}n{}k{}_{}_{}{}{}_ld{}.{}.{}_{}x{}_s{}.{}.{}", m, n, k, b_trans ? "NT" : "NN",
                     dtype_name(a_type), dtype_name(b_type), dtype_name(c_type), lda, ldb, ldc,
                     batch_mode_name(mode), batch, stride_a, stride_b, stride_c);
}

nlohmann::json GemmShape::to_json() const {
  return {{"m", m}, {"n", n}, {"k", k}, {"b_trans", b_trans},
          {"a_type", dtype_name(a_type)}, {"b_type", dtype_name(b_type)}, {"c_type", dtype_name(c_type)},
          {"lda", lda}, {"ldb", ldb}, {"ldc", ldc}, {"batch_mode", batch_mode_name(mode)}, {"batch", batch},
          {"stride_a", stride_a}, {"stride_b", stride_b}, {"stride_c", stride_c}};
}

nlohmann::json GemmAlgo::to_json() const {
  return {{"attrs", attrs}, {"blob", blob_to_hex(blob)}, {"label", label}, {"heuristic_first", heuristic_first}};
}

GemmAlgo GemmAlgo::from_json(const nlohmann::json& j) {
  GemmAlgo a;
  a.attrs = j.value("attrs", nlohmann::json::object());
  a.label = j.value("label", std::string());
  a.heuristic_first = j.value("heuristic_first", false);
  if (!blob_from_hex(j.value("blob", std::string()), &a.blob)) throw std::invalid_argument("'blob' is not hex byte pairs");
  return a;
}

}  // namespace ab

// Decode, rebuild and check cuBLASLt matmul algorithms, and the heuristic's candidates (the exhaustive
// enumeration is in cublaslt_exhaustive.cpp).
#include "backends/cuda/cublaslt_algo.hpp"

#include <cstring>

#include <fmt/format.h>

#include "backends/cuda/cublaslt_attributes.hpp"
#include "backends/cuda/cublaslt_names.hpp"
#include "backends/cuda/cuda_check.hpp"

namespace ab::cuda {

namespace {

const char* reduction_name(std::uint32_t r) {
  switch (r) {
    case CUBLASLT_REDUCTION_SCHEME_NONE: return "none";
    case CUBLASLT_REDUCTION_SCHEME_INPLACE: return "inplace";
    case CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE: return "compute-type";
    case CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE: return "output-type";
    default: return "?";
  }
}

}  // namespace

GemmAlgo decode_algo(const cublasLtMatmulAlgo_t& algo) {
  GemmAlgo g;
  std::int32_t id = -1, splitk = 1;
  std::uint32_t tile = 0, stages = 0, red = 0, swizzle = 0, custom = 0;
  std::uint16_t inner = 0, cluster = 0;
  nlohmann::json& a = g.attrs;
  a = nlohmann::json::object();
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_ID, &id)) a["ALGO_ID"] = id;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile)) a["TILE_ID"] = tile;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages)) a["STAGES_ID"] = stages;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk)) a["SPLITK_NUM"] = splitk;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red)) a["REDUCTION_SCHEME"] = red;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle)) a["CTA_SWIZZLING"] = swizzle;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom)) a["CUSTOM_OPTION"] = custom;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner)) a["INNER_SHAPE_ID"] = inner;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster)) a["CLUSTER_SHAPE_ID"] = cluster;
  g.blob.resize(sizeof algo);
  std::memcpy(g.blob.data(), &algo, sizeof algo);
  std::string label = fmt::format("algo {} tile {} stages {}", id, tile_name(static_cast<int>(tile)),
                                  stages_name(static_cast<int>(stages)));
  if (splitk > 1) label += fmt::format(" splitK {} ({})", splitk, reduction_name(red));
  if (swizzle) label += fmt::format(" swizzle {}", swizzle);
  if (custom) label += fmt::format(" custom {}", custom);
  if (inner) label += fmt::format(" inner {}", inner_shape_name(inner));
  if (cluster) label += fmt::format(" cluster {}", cluster_shape_name(cluster));
  g.label = label;
  return g;
}

bool check_algo(cublasLtHandle_t h, const LtPlan& p, const cublasLtMatmulAlgo_t& algo, std::size_t workspace_bytes,
                std::size_t* workspace_needed, std::string* why) {
  std::uint32_t need = 0;
  struct A { cublasLtMatmulAlgoCapAttributes_t cap; std::uint32_t have; const char* name; } aligns[] = {
      {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, p.align_a(), "B"},  // cuBLASLt's A is our B
      {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES, p.align_b(), "A"},
      {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, p.align_c(), "C"},
      {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES, p.align_c(), "D"}};
  for (const A& x : aligns)
    if (get_cap(algo, x.cap, &need) && need > x.have) {
      *why = fmt::format("needs {}-byte alignment of {}, the shape guarantees {}", need, x.name, x.have);
      return false;
    }
  std::int32_t support = 1;
  if (p.shape().mode == BatchMode::pointer_array && get_cap(algo, CUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT, &support) && !support) {
    *why = "no pointer-array batch support";
    return false;
  }
  if (p.shape().mode == BatchMode::strided && get_cap(algo, CUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT, &support) && !support) {
    *why = "no strided batch support";
    return false;
  }
  cublasLtMatmulHeuristicResult_t r{};
  cublasStatus_t s = cublasLtMatmulAlgoCheck(h, p.op(), p.lt_a(), p.lt_b(), p.lt_c(), p.lt_c(), &algo, &r);
  if (s != CUBLAS_STATUS_SUCCESS) {
    *why = fmt::format("cublasLtMatmulAlgoCheck: {}", cublas_status_name(s));
    return false;
  }
  if (r.workspaceSize > workspace_bytes) {
    *why = fmt::format("needs {} bytes of workspace, {} available", r.workspaceSize, workspace_bytes);
    return false;
  }
  if (workspace_needed) *workspace_needed = r.workspaceSize;
  return true;
}

bool rebuild_algo(cublasLtHandle_t h, const LtPlan& p, const GemmAlgo& in, std::size_t workspace_bytes,
                  cublasLtMatmulAlgo_t* out, std::size_t* workspace_needed, std::string* why) {
  std::string blob_why;
  if (in.blob.size() == sizeof(cublasLtMatmulAlgo_t)) {
    cublasLtMatmulAlgo_t a{};
    std::memcpy(&a, in.blob.data(), sizeof a);
    if (check_algo(h, p, a, workspace_bytes, workspace_needed, &blob_why)) {
      *out = a;
      return true;
    }
    blob_why = "from its blob: " + blob_why;
  } else if (!in.blob.empty()) {
    blob_why = fmt::format("blob has {} bytes, not {}", in.blob.size(), sizeof(cublasLtMatmulAlgo_t));
  }
  const nlohmann::json& at = in.attrs;
  if (!at.is_object() || !at.contains("ALGO_ID") || !at["ALGO_ID"].is_number_integer()) {
    *why = blob_why.empty() ? "neither a 64-byte blob nor an ALGO_ID attribute" : blob_why + "; no ALGO_ID to rebuild from";
    return false;
  }
  cublasLtMatmulAlgo_t a{};
  cublasStatus_t s = cublasLtMatmulAlgoInit(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, p.type_a(), p.type_b(), p.type_c(),
                                            p.type_c(), at["ALGO_ID"].get<int>(), &a);
  if (s != CUBLAS_STATUS_SUCCESS) {
    *why = fmt::format("{}{}cublasLtMatmulAlgoInit(ALGO_ID {}): {}", blob_why, blob_why.empty() ? "" : "; ",
                       at["ALGO_ID"].get<int>(), cublas_status_name(s));
    return false;
  }
  auto u32 = [&](const char* k, cublasLtMatmulAlgoConfigAttributes_t attr) {
    if (at.contains(k) && at[k].is_number_integer()) set_config<std::uint32_t>(&a, attr, at[k].get<std::uint32_t>());
  };
  auto u16 = [&](const char* k, cublasLtMatmulAlgoConfigAttributes_t attr) {
    if (at.contains(k) && at[k].is_number_integer()) set_config<std::uint16_t>(&a, attr, at[k].get<std::uint16_t>());
  };
  u32("TILE_ID", CUBLASLT_ALGO_CONFIG_TILE_ID);
  u32("STAGES_ID", CUBLASLT_ALGO_CONFIG_STAGES_ID);
  if (at.contains("SPLITK_NUM") && at["SPLITK_NUM"].is_number_integer())
    set_config<std::int32_t>(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, at["SPLITK_NUM"].get<std::int32_t>());
  u32("REDUCTION_SCHEME", CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  u32("CTA_SWIZZLING", CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  u32("CUSTOM_OPTION", CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  u16("INNER_SHAPE_ID", CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  u16("CLUSTER_SHAPE_ID", CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  std::string attr_why;
  if (!check_algo(h, p, a, workspace_bytes, workspace_needed, &attr_why)) {
    *why = fmt::format("{}{}from its attributes: {}", blob_why, blob_why.empty() ? "" : "; ", attr_why);
    return false;
  }
  *out = a;
  return true;
}

std::vector<GemmAlgo> heuristic_candidates(cublasLtHandle_t h, const LtPlan& p, int top, std::size_t workspace_bytes) {
  std::vector<GemmAlgo> out;
  for (const auto& r : lt_heuristic(h, p, top < 1 ? 1 : top, workspace_bytes)) {
    out.push_back(decode_algo(r.algo));
    if (out.size() == 1) out.back().heuristic_first = true;
  }
  return out;
}

}  // namespace ab::cuda

// Reading and writing a cublasLtMatmulAlgo_t's config and capability attributes, and its bytes as a key
// (shared by the algorithm decoder and the exhaustive enumeration).
#pragma once
#include <cublasLt.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ab::cuda {

template <class T>
bool get_config(const cublasLtMatmulAlgo_t& a, cublasLtMatmulAlgoConfigAttributes_t attr, T* v) {
  std::size_t written = 0;
  return cublasLtMatmulAlgoConfigGetAttribute(&a, attr, v, sizeof(T), &written) == CUBLAS_STATUS_SUCCESS &&
         written == sizeof(T);
}

template <class T>
bool set_config(cublasLtMatmulAlgo_t* a, cublasLtMatmulAlgoConfigAttributes_t attr, T v) {
  return cublasLtMatmulAlgoConfigSetAttribute(a, attr, &v, sizeof(T)) == CUBLAS_STATUS_SUCCESS;
}

template <class T>
bool get_cap(const cublasLtMatmulAlgo_t& a, cublasLtMatmulAlgoCapAttributes_t attr, T* v) {
  std::size_t written = 0;
  return cublasLtMatmulAlgoCapGetAttribute(&a, attr, v, sizeof(T), &written) == CUBLAS_STATUS_SUCCESS &&
         written == sizeof(T);
}

// A list-valued capability (tile ids, stages ids).
inline std::vector<std::uint32_t> get_cap_list(const cublasLtMatmulAlgo_t& a, cublasLtMatmulAlgoCapAttributes_t attr) {
  std::size_t need = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&a, attr, nullptr, 0, &need) != CUBLAS_STATUS_SUCCESS || need == 0) return {};
  std::vector<std::uint32_t> v(need / sizeof(std::uint32_t));
  std::size_t written = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&a, attr, v.data(), v.size() * sizeof(std::uint32_t), &written) != CUBLAS_STATUS_SUCCESS)
    return {};
  v.resize(written / sizeof(std::uint32_t));
  return v;
}

// The algorithm's bytes, as a key for de-duplicating enumerated configurations.
inline std::string blob_key(const cublasLtMatmulAlgo_t& a) {
  return std::string(reinterpret_cast<const char*>(&a), sizeof a);
}

}  // namespace ab::cuda

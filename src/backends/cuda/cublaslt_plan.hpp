// One GEMM's cuBLASLt descriptors: the row-major C = A·op(B) of a GemmShape mapped onto column-major
// cuBLASLt as C^T = op(B)^T · A^T (cuBLASLt's "A" is our B, its "B" is our A), strided or pointer-array
// batching, the operand alignments the strategies' pointers guarantee, and the algorithm in use.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/backend.hpp"

namespace ab::cuda {

cudaDataType_t cuda_data_type(DType t);

class LtPlan {
 public:
  // Creates the matmul descriptor and layouts; throws BackendError naming the shape when it is invalid.
  explicit LtPlan(const GemmShape& shape);
  ~LtPlan();
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;

  const GemmShape& shape() const { return shape_; }
  cublasLtMatmulDesc_t op() const { return op_; }
  cublasLtMatrixLayout_t lt_a() const { return lt_a_; }  // our B
  cublasLtMatrixLayout_t lt_b() const { return lt_b_; }  // our A
  cublasLtMatrixLayout_t lt_c() const { return lt_c_; }  // our C (also D)
  // Guaranteed byte alignment of cuBLASLt's A (our B), B (our A) and C/D pointers: the largest power of
  // two (<= 256) dividing the row pitch and batch stride, since strategies offset pointers by whole rows.
  std::uint32_t align_a() const { return align_a_; }
  std::uint32_t align_b() const { return align_b_; }
  std::uint32_t align_c() const { return align_c_; }
  cudaDataType_t type_a() const { return cuda_data_type(shape_.b_type); }
  cudaDataType_t type_b() const { return cuda_data_type(shape_.a_type); }
  cudaDataType_t type_c() const { return cuda_data_type(shape_.c_type); }

  // The algorithm in use and where it came from.
  cublasLtMatmulAlgo_t algo{};
  std::size_t algo_workspace = 0;
  GemmAlgo chosen;
  std::string source = "heuristic";
  std::string note;

 private:
  void destroy() noexcept;
  GemmShape shape_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t lt_a_ = nullptr, lt_b_ = nullptr, lt_c_ = nullptr;
  std::uint32_t align_a_ = 256, align_b_ = 256, align_c_ = 256;
};

// Up to `count` heuristic results (best first) for a workspace of `workspace_bytes`; empty when none.
std::vector<cublasLtMatmulHeuristicResult_t> lt_heuristic(cublasLtHandle_t h, const LtPlan& p, int count,
                                                          std::size_t workspace_bytes);

// One cublasLtMatmul with the plan's algorithm on `stream`; a/b/c are our row-major operands (or device
// arrays of pointers in pointer-array mode). Throws BackendError naming the shape.
void lt_matmul(cublasLtHandle_t h, const LtPlan& p, const void* a, const void* b, void* c, float alpha, float beta,
               void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace ab::cuda

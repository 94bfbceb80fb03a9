// cuBLASLt descriptors for a GemmShape, the heuristic query and the matmul call.
#include "backends/cuda/cublaslt_plan.hpp"

#include <fmt/format.h>

#include "backends/cuda/cuda_check.hpp"
#include "core/errors.hpp"
#include "core/stop_request.hpp"

namespace ab::cuda {

cudaDataType_t cuda_data_type(DType t) {
  switch (t) {
    case DType::fp16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::fp32: return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

namespace {

std::uint32_t pow2_alignment(std::int64_t ld, std::int64_t stride, std::size_t elem) {
  std::uint32_t a = 256;
  auto limit = [&](std::int64_t bytes) {
    if (bytes == 0) return;
    while (a > 1 && bytes % a != 0) a >>= 1;
  };
  limit(ld * static_cast<std::int64_t>(elem));
  limit(stride * static_cast<std::int64_t>(elem));
  return a;
}

}  // namespace

LtPlan::LtPlan(const GemmShape& g) : shape_(g) {
  const std::int64_t b_cols = g.b_trans ? g.k : g.n;  // columns of our row-major B
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0 || g.lda < g.k || g.ldb < b_cols || g.ldc < g.n)
    throw BackendError(fmt::format("cuBLASLt gemm: invalid shape {}", g.key()));
  if (g.mode == BatchMode::single && g.batch != 1)
    throw BackendError(fmt::format("cuBLASLt gemm: single mode with batch {} in {}", g.batch, g.key()));
  auto fail = [&](const char* what, cublasStatus_t s) {
    destroy();
    throw BackendError(fmt::format("cuBLASLt gemm {}: {} failed: {}", g.key(), what, cublas_status_name(s)));
  };
  cublasStatus_t s = cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  if (s != CUBLAS_STATUS_SUCCESS) fail("cublasLtMatmulDescCreate", s);
  cublasOperation_t ta = g.b_trans ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
  if ((s = cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta)) != CUBLAS_STATUS_SUCCESS)
    fail("set TRANSA", s);
  if ((s = cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb)) != CUBLAS_STATUS_SUCCESS)
    fail("set TRANSB", s);
  // cuBLASLt A = op(B)^T (n x k): B^T of a stored [n,k] (b_trans) is column-major k x n, transposed.
  const std::uint64_t a_rows = g.b_trans ? g.k : g.n, a_cols = g.b_trans ? g.n : g.k;
  if ((s = cublasLtMatrixLayoutCreate(&lt_a_, type_a(), a_rows, a_cols, g.ldb)) != CUBLAS_STATUS_SUCCESS)
    fail("cublasLtMatrixLayoutCreate(A)", s);
  // cuBLASLt B = A^T: row-major [m,k] is column-major k x m.
  if ((s = cublasLtMatrixLayoutCreate(&lt_b_, type_b(), g.k, g.m, g.lda)) != CUBLAS_STATUS_SUCCESS)
    fail("cublasLtMatrixLayoutCreate(B)", s);
  // cuBLASLt C = C^T: row-major [m,n] is column-major n x m.
  if ((s = cublasLtMatrixLayoutCreate(&lt_c_, type_c(), g.n, g.m, g.ldc)) != CUBLAS_STATUS_SUCCESS)
    fail("cublasLtMatrixLayoutCreate(C)", s);
  if (g.mode != BatchMode::single) {
    const std::int32_t count = static_cast<std::int32_t>(g.batch);
    if (g.batch > 0x7fffffff) fail("batch count over int32", CUBLAS_STATUS_INVALID_VALUE);
    const bool ptr = g.mode == BatchMode::pointer_array;
    struct L { cublasLtMatrixLayout_t l; std::int64_t stride; } ls[3] = {{lt_a_, g.stride_b}, {lt_b_, g.stride_a}, {lt_c_, g.stride_c}};
    for (const L& x : ls) {
      if ((s = cublasLtMatrixLayoutSetAttribute(x.l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count)) != CUBLAS_STATUS_SUCCESS)
        fail("set BATCH_COUNT", s);
      if (ptr) {
        const std::uint32_t mode = CUBLASLT_BATCH_MODE_POINTER_ARRAY;
        if ((s = cublasLtMatrixLayoutSetAttribute(x.l, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode, sizeof mode)) != CUBLAS_STATUS_SUCCESS)
          fail("set BATCH_MODE=POINTER_ARRAY", s);
      } else {
        const std::int64_t stride = x.stride;
        if ((s = cublasLtMatrixLayoutSetAttribute(x.l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride)) != CUBLAS_STATUS_SUCCESS)
          fail("set STRIDED_BATCH_OFFSET", s);
      }
    }
  }
  const bool strided = g.mode == BatchMode::strided;
  align_a_ = pow2_alignment(g.ldb, strided ? g.stride_b : 0, dtype_size(g.b_type));
  align_b_ = pow2_alignment(g.lda, strided ? g.stride_a : 0, dtype_size(g.a_type));
  align_c_ = pow2_alignment(g.ldc, strided ? g.stride_c : 0, dtype_size(g.c_type));
}

LtPlan::~LtPlan() { destroy(); }

void LtPlan::destroy() noexcept {
  if (lt_c_) cublasLtMatrixLayoutDestroy(lt_c_);
  if (lt_b_) cublasLtMatrixLayoutDestroy(lt_b_);
  if (lt_a_) cublasLtMatrixLayoutDestroy(lt_a_);
  if (op_) cublasLtMatmulDescDestroy(op_);
  lt_a_ = lt_b_ = lt_c_ = nullptr;
  op_ = nullptr;
}

std::vector<cublasLtMatmulHeuristicResult_t> lt_heuristic(cublasLtHandle_t h, const LtPlan& p, int count,
                                                          std::size_t workspace_bytes) {
  std::vector<cublasLtMatmulHeuristicResult_t> out;
  if (count <= 0) return out;
  cublasLtMatmulPreference_t pref = nullptr;
  AB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  auto set = [&](cublasLtMatmulPreferenceAttributes_t attr, const void* v, std::size_t n) {
    cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(pref, attr, v, n);
    if (s != CUBLAS_STATUS_SUCCESS) {
      cublasLtMatmulPreferenceDestroy(pref);
      throw_cublas_error(s, "cublasLtMatmulPreferenceSetAttribute");
    }
  };
  const std::uint64_t ws = workspace_bytes;
  set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  const std::uint32_t aa = p.align_a(), ab = p.align_b(), ac = p.align_c();
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &aa, sizeof aa);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &ab, sizeof ab);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &ac, sizeof ac);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &ac, sizeof ac);
  out.resize(static_cast<std::size_t>(count));
  int returned = 0;
  cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(h, p.op(), p.lt_a(), p.lt_b(), p.lt_c(), p.lt_c(), pref, count,
                                                    out.data(), &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS) returned = 0;  // NOT_SUPPORTED: no algorithm for this shape
  std::vector<cublasLtMatmulHeuristicResult_t> ok;
  for (int i = 0; i < returned; ++i)
    if (out[i].state == CUBLAS_STATUS_SUCCESS) ok.push_back(out[i]);
  return ok;
}

void lt_matmul(cublasLtHandle_t h, const LtPlan& p, const void* a, const void* b, void* c, float alpha, float beta,
               void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  // A forward of one GEMM per (batch, head, page) can take seconds (nested on a long paged decode): a stop request
  // (Ctrl-C) ends it at its next call, as the CPU backend's loops do (core/parallel.hpp).
  if (stop_requested()) throw StopRequestedError();
  cublasStatus_t s = cublasLtMatmul(h, p.op(), &alpha, b, p.lt_a(), a, p.lt_b(), &beta, c, p.lt_c(), c, p.lt_c(),
                                    &p.algo, workspace, workspace_bytes, stream);
  if (s != CUBLAS_STATUS_SUCCESS) throw_cublas_error(s, fmt::format("cublasLtMatmul {} [{}]", p.shape().key(), p.chosen.label));
}

}  // namespace ab::cuda

// The device's measured dense fp16 tensor-core ceiling: one cuBLASLt GEMM of 8192 x 8192 x 8192 (fp16 in and
// out, fp32 accumulation, cuBLASLt's first heuristic algorithm), timed with events, best of 5 after a warm-up.
// Plots draw it as the TFLOP/s ceiling (docs/report-format.md: device.peak_tflops).
#include "backends/cuda/peak_gemm.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"

namespace ab::cuda {

namespace {

// Everything the probe allocates, released on every path.
struct GemmProbe {
  void *a = nullptr, *b = nullptr, *c = nullptr, *workspace = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t layout = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~GemmProbe() {
    if (stream) cudaStreamSynchronize(stream);
    for (void* p : {a, b, c, workspace})
      if (p) cudaFree(p);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (stream) cudaStreamDestroy(stream);
    if (op) cublasLtMatmulDescDestroy(op);
    if (layout) cublasLtMatrixLayoutDestroy(layout);
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
  }
};

}  // namespace

double measure_peak_gemm_tflops(cublasLtHandle_t lt, int device) {
  int current = -1;
  AB_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device || lt == nullptr) return 0;
  constexpr std::int64_t n = 8192;
  constexpr std::size_t matrix_bytes = std::size_t(n) * n * sizeof(__half);
  constexpr std::size_t workspace_bytes = std::size_t(32) << 20;
  std::size_t free_b = 0, total_b = 0;
  AB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (3 * matrix_bytes + workspace_bytes > free_b / 2) return 0;  // leave the run its memory
  GemmProbe g;
  for (auto [buffer, bytes] : {std::pair{&g.a, matrix_bytes}, std::pair{&g.b, matrix_bytes}, std::pair{&g.c, matrix_bytes},
                                std::pair{&g.workspace, workspace_bytes}})
    if ((*buffer = try_device_alloc(bytes, "peak GEMM")) == nullptr) return 0;
  AB_CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  AB_CUDA_CHECK(cudaEventCreate(&g.start));
  AB_CUDA_CHECK(cudaEventCreate(&g.stop));
  // Small values (every half is 0x1414, about 0.0011) so that the products stay finite; the time does not depend on them.
  AB_CUDA_CHECK(cudaMemsetAsync(g.a, 0x14, matrix_bytes, g.stream));
  AB_CUDA_CHECK(cudaMemsetAsync(g.b, 0x14, matrix_bytes, g.stream));

  AB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  AB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g.layout, CUDA_R_16F, n, n, n));
  AB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&g.pref));
  std::uint64_t ws = workspace_bytes;
  AB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(g.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  AB_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, g.op, g.layout, g.layout, g.layout, g.layout, g.pref, 1, &heuristic,
                                                 &found));
  if (found < 1) return 0;
  const float alpha = 1.0f, beta = 0.0f;
  auto gemm = [&] {
    AB_CUBLAS_CHECK(cublasLtMatmul(lt, g.op, &alpha, g.a, g.layout, g.b, g.layout, &beta, g.c, g.layout, g.c, g.layout,
                                   &heuristic.algo, g.workspace, workspace_bytes, g.stream));
  };
  gemm();  // warm-up
  float best_ms = 0;
  for (int rep = 0; rep < 5; ++rep) {
    AB_CUDA_CHECK(cudaEventRecord(g.start, g.stream));
    gemm();
    AB_CUDA_CHECK(cudaEventRecord(g.stop, g.stream));
    AB_CUDA_CHECK(cudaEventSynchronize(g.stop));
    float ms = 0;
    AB_CUDA_CHECK(cudaEventElapsedTime(&ms, g.start, g.stop));
    if (ms > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
  }
  const double flops = 2.0 * static_cast<double>(n) * n * n;
  return best_ms > 0 ? flops / (best_ms * 1e-3) * 1e-12 : 0.0;
}

}  // namespace ab::cuda

// The measured tensor-core ceiling of a CUDA device (peak_gemm.cpp says how it is measured).
#pragma once
#include <cublasLt.h>

namespace ab::cuda {

// Dense fp16 GEMM TFLOP/s (8192^3, fp32 accumulation, best of 5) on `device`, which must be the current
// device; 0 when the buffers do not fit in half the free memory or cuBLASLt offers no algorithm.
// BackendError on any other CUDA or cuBLASLt failure.
double measure_peak_gemm_tflops(cublasLtHandle_t lt, int device);

}  // namespace ab::cuda

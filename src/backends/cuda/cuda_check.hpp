// Error checking for CUDA runtime, cuBLASLt and kernel-launch results: a BackendError that names the call
// and the error, marked sticky when the error leaves the CUDA context unusable.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

namespace ab::cuda {

// Errors after which the context is corrupt until cudaDeviceReset (illegal address, launch failure...).
bool is_sticky(cudaError_t e);
// "cudaErrorIllegalAddress (an illegal memory access was encountered)".
std::string cuda_error_text(cudaError_t e);
const char* cublas_status_name(cublasStatus_t s);

[[noreturn]] void throw_cuda_error(cudaError_t e, const std::string& what);
[[noreturn]] void throw_cublas_error(cublasStatus_t s, const std::string& what);
// For a kernels/ launcher's result: throws BackendError naming the kernel when `err` is not cudaSuccess.
void check_launch(int err, const char* kernel);

}  // namespace ab::cuda

#define AB_CUDA_CHECK(call)                                         \
  do {                                                              \
    cudaError_t ab_cuda_err_ = (call);                              \
    if (ab_cuda_err_ != cudaSuccess) ::ab::cuda::throw_cuda_error(ab_cuda_err_, #call); \
  } while (0)

#define AB_CUBLAS_CHECK(call)                                       \
  do {                                                              \
    cublasStatus_t ab_cublas_st_ = (call);                          \
    if (ab_cublas_st_ != CUBLAS_STATUS_SUCCESS) ::ab::cuda::throw_cublas_error(ab_cublas_st_, #call); \
  } while (0)

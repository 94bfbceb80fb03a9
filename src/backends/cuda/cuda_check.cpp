// CUDA / cuBLASLt error classification and the BackendErrors thrown for them.
#include "backends/cuda/cuda_check.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"

namespace ab::cuda {

bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

std::string cuda_error_text(cudaError_t e) {
  return fmt::format("{} ({})", cudaGetErrorName(e), cudaGetErrorString(e));
}

const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

void throw_cuda_error(cudaError_t e, const std::string& what) {
  const bool sticky = is_sticky(e);
  if (!sticky) (void)cudaGetLastError();  // clear the non-sticky error so later calls start clean
  throw BackendError(fmt::format("{} failed: {}{}", what, cuda_error_text(e),
                                 sticky ? " [the CUDA context is unusable until it is reset]" : ""),
                     sticky);
}

void throw_cublas_error(cublasStatus_t s, const std::string& what) {
  // A failed execution may hide a sticky device error: look at the runtime's state.
  cudaError_t e = cudaPeekAtLastError();
  const bool sticky = is_sticky(e);
  if (!sticky) (void)cudaGetLastError();
  std::string cuda = e != cudaSuccess ? fmt::format("; CUDA reports {}", cuda_error_text(e)) : std::string();
  throw BackendError(fmt::format("{} failed: {} ({}){}", what, cublas_status_name(s), static_cast<int>(s), cuda), sticky);
}

void check_launch(int err, const char* kernel) {
  if (err == 0) return;
  throw_cuda_error(static_cast<cudaError_t>(err), fmt::format("kernel launch {}", kernel));
}

}  // namespace ab::cuda

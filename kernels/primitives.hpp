// Host launchers for the memory-bound attention primitives (softmax update, page softmax, page combine,
// finalize, page gather). No CUDA headers: the stream is a cudaStream_t passed as void*, and each returns
// the cudaError_t of its launch (cudaGetLastError right after it; 0 is success, nothing launched for an
// empty problem; cudaErrorInvalidValue for dtypes the kernels are not instantiated for).
#pragma once
#include "core/backend.hpp"

namespace ab::kernels {

int launch_softmax_update(const SoftmaxUpdateArgs& a, void* stream);
int launch_page_softmax(const PageSoftmaxArgs& a, void* stream);
int launch_combine_pages(const CombineArgs& a, void* stream);
int launch_finalize(const FinalizeArgs& a, void* stream);
int launch_gather_pages(const GatherArgs& a, void* stream);

// Kernel name stems as CUPTI reports them (for tests that look for them in launch records).
inline const char* softmax_update_kernel_name() { return "softmax_update_kernel"; }
inline const char* page_softmax_kernel_name() { return "page_softmax_kernel"; }

}  // namespace ab::kernels

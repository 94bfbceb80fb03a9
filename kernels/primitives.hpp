// Host launchers for the memory-bound attention primitives (softmax update, page softmax, page combine,
// finalize, page gather). No CUDA headers: the stream is a cudaStream_t passed as void*, and each returns
// the cudaError_t of its launch (cudaGetLastError right after it; 0 is success, nothing launched for an
// empty problem; cudaErrorInvalidValue for dtypes the kernels are not instantiated for).
#pragma once
#include "core/attention_kernels.hpp"

namespace ab::kernels {

int launch_softmax_update(const SoftmaxUpdateArgs& a, void* stream);
int launch_page_softmax(const PageSoftmaxArgs& a, void* stream);
// With one page the combine is O = partial / page_sum and runs as the finalize kernel (CUPTI names it so).
int launch_combine_pages(const CombineArgs& a, void* stream);
int launch_finalize(const FinalizeArgs& a, void* stream);
int launch_gather_pages(const GatherArgs& a, void* stream);

}  // namespace ab::kernels

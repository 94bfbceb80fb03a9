// AB_HOST_DEVICE: a function of core/ that the CUDA kernels call too (__host__ __device__ under nvcc, nothing
// in a host-only build, which needs no CUDA headers).
#pragma once

#if defined(__CUDACC__)
#define AB_HOST_DEVICE __host__ __device__
#else
#define AB_HOST_DEVICE
#endif

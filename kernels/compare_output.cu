// Output-against-reference comparison on the GPU: per-block sums in double of squared error and squared
// reference, the largest absolute error and the non-finite count, as the host's compare_output computes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "compare_output.hpp"
#include "core/o_rows.hpp"

namespace ab::kernels {

namespace {

__device__ double load_out(const void* out, std::int64_t i, bool bf16) {
  return bf16 ? static_cast<double>(__bfloat162float(static_cast<const __nv_bfloat16*>(out)[i]))
              : static_cast<double>(__half2float(static_cast<const __half*>(out)[i]));
}

__global__ void compare_output_kernel(CompareParams p) {
  double num = 0, den = 0, max_abs = 0, bad = 0;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n; i += step) {
    if (p.q_lens) {  // a mixed batch's padding row: not compared
      const ORow o = o_row_of(i, p.width, p.rows, p.heads);
      if (o.row >= p.q_lens[o.seq]) continue;
    }
    const double x = load_out(p.out, i, p.bf16);
    const double r = static_cast<double>(p.ref[i]);
    if (!isfinite(x)) {
      bad += 1;
      continue;
    }
    const double d = fabs(x - r);
    max_abs = fmax(max_abs, d);
    num += d * d;
    den += r * r;
  }
  __shared__ double s[kCompareFields][kCompareThreads];
  s[0][threadIdx.x] = num;
  s[1][threadIdx.x] = den;
  s[2][threadIdx.x] = max_abs;
  s[3][threadIdx.x] = bad;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      s[0][threadIdx.x] += s[0][threadIdx.x + half];
      s[1][threadIdx.x] += s[1][threadIdx.x + half];
      s[2][threadIdx.x] = fmax(s[2][threadIdx.x], s[2][threadIdx.x + half]);
      s[3][threadIdx.x] += s[3][threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x < kCompareFields) p.partials[blockIdx.x * kCompareFields + threadIdx.x] = s[threadIdx.x][0];
}

}  // namespace

int launch_compare_output(const CompareParams& p, void* stream) {
  compare_output_kernel<<<kCompareBlocks, kCompareThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace ab::kernels

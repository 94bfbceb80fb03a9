// The GPU reference attention: plain fp32, one 128-thread block per (head, query row), keys in chunks of
// 128 with an online softmax, K/V read through either layout (query head h reads KV head h / group), each
// sequence's own KV length, causal aligned bottom-right, a sliding window and soft-capping (Problem's rules),
// V and O head_dim_v wide.
// Correctness over speed.
#include "primitive_device.cuh"
#include "reference_attention.hpp"

namespace ab::kernels {

namespace {

using namespace dev;

constexpr int kRefThreads = 128;
constexpr int kRefMaxPerThread = static_cast<int>(kReferenceMaxHeadDim / kRefThreads);
static_assert(kReferenceMaxHeadDim % kRefThreads == 0, "every thread's share of a row is whole");

__device__ __forceinline__ std::int64_t kv_row(const ReferenceParams& p, std::int64_t b, std::int64_t h, std::int64_t s) {
  if (!p.paged) return (b * p.kv_heads + h) * p.seq_len + s;
  const std::int64_t slot = p.block_table[b * p.pages + s / p.page_size];
  return (slot * p.kv_heads + h) * p.page_size + s % p.page_size;
}

__device__ __forceinline__ float block_reduce(float v, float* red, bool is_max) {
  for (int o = 16; o > 0; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  __syncthreads();
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  v = red[0];
  for (int i = 1; i < kRefThreads / 32; ++i) v = is_max ? fmaxf(v, red[i]) : v + red[i];
  return v;
}

template <class T>
__global__ void __launch_bounds__(kRefThreads) reference_attention_kernel(ReferenceParams p) {
  __shared__ float q[kReferenceMaxHeadDim];
  __shared__ float probs[kRefThreads];
  __shared__ float red[kRefThreads / 32];
  const std::int64_t S = p.q_len, D = p.head_dim, Dv = p.head_dim_v > 0 ? p.head_dim_v : p.head_dim;
  const std::int64_t bh = blockIdx.x / S, i = blockIdx.x % S;
  const std::int64_t b = bh / p.heads, h = (bh % p.heads) / (p.heads / p.kv_heads);
  const std::int64_t len = p.kv_lens ? p.kv_lens[b] : p.seq_len;
  const std::int64_t ql = p.q_lens ? p.q_lens[b] : S;  // this sequence's queries: rows past them are padding
  const T* Q = static_cast<const T*>(p.q);
  const T* K = static_cast<const T*>(p.k);
  const T* V = static_cast<const T*>(p.v);
  for (std::int64_t d = threadIdx.x; d < D; d += kRefThreads) q[d] = to_f<T>(Q[(bh * S + i) * D + d]);
  __syncthreads();
  float o[kRefMaxPerThread];
#pragma unroll
  for (int k = 0; k < kRefMaxPerThread; ++k) o[k] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  const std::int64_t iq = i < ql ? i : ql - 1;  // a padding row: the last query's keys
  const std::int64_t n = p.causal && iq + len - ql + 1 < len ? iq + len - ql + 1 : len;
  const std::int64_t first = p.window > 0 && iq + len - ql - p.window > 0 ? iq + len - ql - p.window : 0;
  for (std::int64_t j0 = first; j0 < n; j0 += kRefThreads) {
    const std::int64_t j = j0 + threadIdx.x;
    float s = -INFINITY;
    if (j < n) {
      const T* krow = K + kv_row(p, b, h, j) * D;
      float dot = 0.0f;
      for (std::int64_t d = 0; d < D; ++d) dot = fmaf(q[d], to_f<T>(krow[d]), dot);
      s = dot * p.scale;
      if (p.softcap > 0.0f) s = p.softcap * tanhf(s / p.softcap);
    }
    const float m_new = fmaxf(m, block_reduce(s, red, true));
    const float alpha = m == -INFINITY ? 0.0f : expf(m - m_new);
    const float pj = j < n ? expf(s - m_new) : 0.0f;
    l = l * alpha + block_reduce(pj, red, false);
    probs[threadIdx.x] = pj;
    __syncthreads();
    const int cnt = static_cast<int>(n - j0 < kRefThreads ? n - j0 : kRefThreads);
#pragma unroll
    for (int k = 0; k < kRefMaxPerThread; ++k) {
      const std::int64_t d = threadIdx.x + static_cast<std::int64_t>(k) * kRefThreads;
      if (d >= Dv) break;
      float acc = o[k] * alpha;
      for (int jj = 0; jj < cnt; ++jj) acc = fmaf(probs[jj], to_f<T>(V[kv_row(p, b, h, j0 + jj) * Dv + d]), acc);
      o[k] = acc;
    }
    m = m_new;
    __syncthreads();
  }
  if (p.sinks) l += expf(p.sinks[bh % p.heads] - m);
  float* out = p.out + (bh * S + i) * Dv;
#pragma unroll
  for (int k = 0; k < kRefMaxPerThread; ++k) {
    const std::int64_t d = threadIdx.x + static_cast<std::int64_t>(k) * kRefThreads;
    if (d < Dv) out[d] = o[k] / l;
  }
}

}  // namespace

int launch_reference_attention(const ReferenceParams& p, void* stream) {
  if (p.head_dim <= 0 || p.head_dim > kReferenceMaxHeadDim) return static_cast<int>(cudaErrorInvalidValue);
  if (p.head_dim_v < 0 || p.head_dim_v > kReferenceMaxHeadDim) return static_cast<int>(cudaErrorInvalidValue);
  if (p.paged && (!p.block_table || p.page_size <= 0)) return static_cast<int>(cudaErrorInvalidValue);
  if (p.kv_heads <= 0 || p.heads % p.kv_heads != 0) return static_cast<int>(cudaErrorInvalidValue);
  const std::int64_t blocks = p.batch * p.heads * p.q_len;
  if (blocks <= 0) return 0;
  if (blocks > 0x7fffffff) return static_cast<int>(cudaErrorInvalidConfiguration);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (p.bf16) reference_attention_kernel<__nv_bfloat16><<<static_cast<unsigned>(blocks), kRefThreads, 0, s>>>(p);
  else reference_attention_kernel<__half><<<static_cast<unsigned>(blocks), kRefThreads, 0, s>>>(p);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace ab::kernels

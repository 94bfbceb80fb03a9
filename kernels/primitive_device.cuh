// Device helpers shared by the memory-bound primitive kernels: dtype conversion, 8-wide vector
// loads/stores, group reductions (sub-warp, warp or whole block) and the row-softmax core.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace ab::kernels::dev {

constexpr float kLog2e = 1.4426950408889634f;
constexpr int kVec = 8;  // elements per vector chunk (16 bytes of a 16-bit type, two float4 of fp32)

template <class T> __device__ __forceinline__ float to_f(T v);
template <> __device__ __forceinline__ float to_f<float>(float v) { return v; }
template <> __device__ __forceinline__ float to_f<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_f<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Round a float to what T holds (the value the next GEMM will consume).
template <class T> __device__ __forceinline__ float round_to(float v) { return to_f<T>(from_f<T>(v)); }

// 8 consecutive elements; p must be 16-byte aligned.
template <class T> __device__ __forceinline__ void load8(const T* p, float (&v)[kVec]) {
  uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
  for (int i = 0; i < kVec; ++i) v[i] = to_f<T>(e[i]);
}
template <> __device__ __forceinline__ void load8<float>(const float* p, float (&v)[kVec]) {
  float4 a = __ldg(reinterpret_cast<const float4*>(p));
  float4 b = __ldg(reinterpret_cast<const float4*>(p) + 1);
  v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w;
  v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
}

template <class T> __device__ __forceinline__ void store8(T* p, const float (&v)[kVec]) {
  uint4 raw;
  T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
  for (int i = 0; i < kVec; ++i) e[i] = from_f<T>(v[i]);
  *reinterpret_cast<uint4*>(p) = raw;
}
template <> __device__ __forceinline__ void store8<float>(float* p, const float (&v)[kVec]) {
  reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
  reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
}

// Reductions over a group of G threads (G a power of two). G <= 32: aligned lanes of one warp (every
// lane of the warp must call). G > 32: the whole block is one group (every thread must call); `smem`
// holds at least blockDim/32 floats.
template <class Op>
__device__ __forceinline__ float group_reduce(float v, int G, float* smem, Op op) {
  const int width = G < 32 ? G : 32;
  for (int o = width >> 1; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  if (G > 32) {
    const int warp = threadIdx.x >> 5, nwarps = G >> 5;
    __syncthreads();  // an earlier reduction may still be reading smem
    if ((threadIdx.x & 31) == 0) smem[warp] = v;
    __syncthreads();
    v = smem[0];
    for (int i = 1; i < nwarps; ++i) v = op(v, smem[i]);
  }
  return v;
}
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

// What a row's scores become before its softmax (core/key_mask.hpp's window and soft-cap). NoScoreMod: nothing
// (every score below nvalid counts; the kernels without a variant are built with it, unchanged). WindowCap: the
// scores before `first` are hidden (a sliding window) and the others soft-capped (cap > 0: cap·tanh(s/cap)).
struct NoScoreMod {};
struct WindowCap {
  int first = 0;
  float cap = 0.0f;
  __device__ __forceinline__ float apply(int c, float s) const {
    if (c < first) return -INFINITY;
    return cap > 0.0f ? cap * tanhf(s / cap) : s;
  }
};
template <class Mod>
inline constexpr bool kModifies = !std::is_same_v<Mod, NoScoreMod>;

// Softmax numerator of one row, read once and written once. The row has `nvalid` leading scores not masked
// at its end (causal keys past the query, or a short page's missing keys; a window's hidden keys at its start are
// Mod's) and
// `out_len` probability slots; slots past nvalid get 0. m = max(m_prev, max of the valid scores);
// P = round_to<TP>(exp(s - m)), 0 when m is -inf; returns m and the sum of the rounded P. Thread `lane`
// of a group of G holds chunks c = (k*G + lane)*8 for k < CHUNKS, so G*8*CHUNKS >= out_len is required.
// VEC: row starts of scores and probs are 16-byte aligned, so whole chunks move as 16-byte vectors. Mod: what
// the valid scores become first (WindowCap: a hidden one counts as masked).
template <class TS, class TP, int CHUNKS, bool VEC, class Mod = NoScoreMod>
__device__ __forceinline__ void row_softmax(const TS* __restrict__ srow, int nvalid, TP* __restrict__ prow,
                                            int out_len, int G, int lane, float* smem, float m_prev,
                                            float* m_out, float* sum_out, const Mod& mod = Mod{}) {
  (void)mod;
  float v[CHUNKS][kVec];
  float mx = -INFINITY;
#pragma unroll
  for (int k = 0; k < CHUNKS; ++k) {
    const int c = (k * G + lane) * kVec;
    if (VEC && c + kVec <= nvalid) {
      load8<TS>(srow + c, v[k]);
    } else {
#pragma unroll
      for (int i = 0; i < kVec; ++i) v[k][i] = c + i < nvalid ? to_f<TS>(srow[c + i]) : -INFINITY;
    }
    if constexpr (kModifies<Mod>) {
#pragma unroll
      for (int i = 0; i < kVec; ++i)
        if (c + i < nvalid) v[k][i] = mod.apply(c + i, v[k][i]);
    }
#pragma unroll
    for (int i = 0; i < kVec; ++i) mx = fmaxf(mx, v[k][i]);
  }
  mx = group_reduce(mx, G, smem, MaxOp());
  const float m = fmaxf(m_prev, mx);
  const bool none = m == -INFINITY;
  const float m2 = none ? 0.0f : m * kLog2e;
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < CHUNKS; ++k) {
    const int c = (k * G + lane) * kVec;
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      // A hidden score (Mod) is -inf: its p is exp2(-inf) = 0.
      float p = (c + i < nvalid && !none) ? round_to<TP>(exp2f(fmaf(v[k][i], kLog2e, -m2))) : 0.0f;
      v[k][i] = p;
      sum += p;
    }
    if (VEC && c + kVec <= out_len) {
      store8<TP>(prow + c, v[k]);
    } else {
#pragma unroll
      for (int i = 0; i < kVec; ++i)
        if (c + i < out_len) prow[c + i] = from_f<TP>(v[k][i]);
    }
  }
  sum = group_reduce(sum, G, smem, SumOp());
  *m_out = m;
  *sum_out = sum;
}

// The same row with no register cache, for rows too long for it: the block (G = blockDim.x threads)
// is one group; scores are read twice (max, then exp) instead of once.
template <class TS, class TP, class Mod = NoScoreMod>
__device__ __forceinline__ void row_softmax_long(const TS* __restrict__ srow, int nvalid, TP* __restrict__ prow,
                                                 int out_len, float* smem, float m_prev, float* m_out,
                                                 float* sum_out, const Mod& mod = Mod{}) {
  (void)mod;
  const int G = blockDim.x, lane = threadIdx.x;
  float mx = -INFINITY;
  if constexpr (kModifies<Mod>) {
    for (int c = lane; c < nvalid; c += G) mx = fmaxf(mx, mod.apply(c, to_f<TS>(srow[c])));
  } else {
    for (int c = lane; c < nvalid; c += G) mx = fmaxf(mx, to_f<TS>(srow[c]));
  }
  mx = group_reduce(mx, G, smem, MaxOp());
  const float m = fmaxf(m_prev, mx);
  const bool none = m == -INFINITY;
  const float m2 = none ? 0.0f : m * kLog2e;
  float sum = 0.0f;
  for (int c = lane; c < out_len; c += G) {
    float p;
    if constexpr (kModifies<Mod>)
      p = (c < nvalid && !none) ? round_to<TP>(exp2f(fmaf(mod.apply(c, to_f<TS>(srow[c])), kLog2e, -m2))) : 0.0f;
    else
      p = (c < nvalid && !none) ? round_to<TP>(exp2f(fmaf(to_f<TS>(srow[c]), kLog2e, -m2))) : 0.0f;
    prow[c] = from_f<TP>(p);
    sum += p;
  }
  sum = group_reduce(sum, G, smem, SumOp());
  *m_out = m;
  *sum_out = sum;
}

// How rows of `out_len` elements map onto threads: G threads a row (a power of two, 4..1024), CHUNKS
// 8-element chunks a thread (1..4); `long_rows` when even 1024 threads x 4 chunks cannot hold a row.
struct RowConfig {
  int G = 4, chunks = 1, block = 256, rows_per_block = 64;
  bool long_rows = false;
};
inline RowConfig row_config(std::int64_t out_len) {
  RowConfig rc;
  std::int64_t want = (out_len + 31) / 32;  // threads for ~32 elements each
  int G = 4;
  while (G < want && G < 1024) G <<= 1;
  rc.G = G;
  std::int64_t chunks = (out_len + std::int64_t(G) * kVec - 1) / (std::int64_t(G) * kVec);
  if (chunks < 1) chunks = 1;
  if (chunks > 4) {
    rc.long_rows = true;
    rc.G = 1024;
    rc.chunks = 0;
    rc.block = 1024;
    rc.rows_per_block = 1;
    return rc;
  }
  rc.chunks = static_cast<int>(chunks);
  rc.block = G <= 32 ? 256 : G;
  rc.rows_per_block = rc.block / G;
  return rc;
}

inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }
// Every row start base + i*stride (elements of `elem` bytes) is 16-byte aligned.
inline bool stride_aligned16(std::int64_t stride, std::size_t elem) { return (stride * static_cast<std::int64_t>(elem)) % 16 == 0; }

}  // namespace ab::kernels::dev

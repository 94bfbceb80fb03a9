// Page combine (O = sum_p e^(m_p - m) acc_p / sum_p e^(m_p - m) l_p over a row's pages) and finalize
// (O = acc / l): fp32 partials in, the output dtype out, float4 loads where the head dim allows. With attention
// sinks (core/softmax_sinks.hpp) each row's denominator gains exp(sink - m): the *_sinks_kernel instances, one
// row body with the kernels without them (whose code does not change).
#include "core/softmax_sinks.hpp"
#include "primitive_device.cuh"
#include "primitives.hpp"

namespace ab::kernels {

namespace {

using namespace dev;

// 4 consecutive outputs; p aligned to 4 elements.
template <class T> __device__ __forceinline__ void store4(T* p, float4 v) {
  __align__(8) T e[4] = {from_f<T>(v.x), from_f<T>(v.y), from_f<T>(v.z), from_f<T>(v.w)};
  *reinterpret_cast<uint2*>(p) = *reinterpret_cast<const uint2*>(e);
}
template <> __device__ __forceinline__ void store4<float>(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }

// The sink term of a row's denominator: NoSink adds none (its kernels keep their code), RowSink
// exp(logit[head] - m), the head found from the row's item and row within it (core/softmax_sinks.hpp).
struct NoSink {
  static constexpr bool kAdds = false;
};
struct RowSink {
  static constexpr bool kAdds = true;
  SoftmaxSinks s;
  const float* row_max;  // finalize: each row's max (the combine computes its own)
  __device__ float term(std::int64_t item, std::int64_t r, float m) const {
    return expf(__ldg(s.logits + sink_head(s, item, r)) - m);
  }
  __device__ float max_of(std::int64_t row) const { return __ldg(row_max + row); }
};

struct CombineParams {
  const float* partial;
  const float* page_max;
  const float* page_sum;
  void* out;
  std::int64_t total_rows, pages, rows, head_dim;
  int tpr;  // threads a row
};

// One pass over a row's pages with an online rescale, so each page's statistics and partial are loaded
// together (no dependent second sweep); pages with max -inf (every key masked) are skipped.
template <class TO, bool VEC4, class Sink>
__device__ __forceinline__ void combine_row(const CombineParams& p, const Sink& sink) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / p.tpr) + threadIdx.x / p.tpr;
  const int lane = threadIdx.x % p.tpr;
  if (row >= p.total_rows) return;
  std::int64_t bh, r;
  if (p.total_rows <= 0x7fffffff) {
    const unsigned ur = static_cast<unsigned>(row), rows = static_cast<unsigned>(p.rows);
    bh = ur / rows;
    r = ur - static_cast<unsigned>(bh) * rows;
  } else {
    bh = row / p.rows;
    r = row % p.rows;
  }
  const std::int64_t stat0 = bh * p.pages * p.rows + r;  // (bh, page 0, r); page stride = rows
  const std::int64_t pstride = p.rows * p.head_dim;      // partial page stride
  const float* part0 = p.partial + stat0 * p.head_dim;
  TO* out = static_cast<TO*>(p.out) + row * p.head_dim;
  const int step = (VEC4 ? 4 : 1) * p.tpr;
  for (std::int64_t d = static_cast<std::int64_t>(lane) * (VEC4 ? 4 : 1); d < p.head_dim; d += step) {
    float m = -INFINITY, l = 0.0f;
    float4 o = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 4
    for (std::int64_t pg = 0; pg < p.pages; ++pg) {
      const float mp = __ldg(p.page_max + stat0 + pg * p.rows);
      const float sp = __ldg(p.page_sum + stat0 + pg * p.rows);
      float4 x;
      if (VEC4) {
        x = __ldg(reinterpret_cast<const float4*>(part0 + pg * pstride + d));
      } else {
        x.x = __ldg(part0 + pg * pstride + d);
        x.y = x.z = x.w = 0.0f;
      }
      if (mp == -INFINITY) continue;
      const float m_new = fmaxf(m, mp);
      const float a = m == -INFINITY ? 0.0f : expf(m - m_new), w = expf(mp - m_new);
      l = l * a + sp * w;
      o.x = o.x * a + x.x * w;
      o.y = o.y * a + x.y * w;
      o.z = o.z * a + x.z * w;
      o.w = o.w * a + x.w * w;
      m = m_new;
    }
    if constexpr (Sink::kAdds) l += sink.term(bh, r, m);
    if (VEC4) store4<TO>(out + d, make_float4(o.x / l, o.y / l, o.z / l, o.w / l));
    else out[d] = from_f<TO>(o.x / l);
  }
}

template <class TO, bool VEC4>
__global__ void combine_pages_kernel(CombineParams p) {
  combine_row<TO, VEC4>(p, NoSink{});
}
template <class TO, bool VEC4>
__global__ void combine_pages_sinks_kernel(CombineParams p, RowSink sink) {
  combine_row<TO, VEC4>(p, sink);
}

template <class TO>
int launch_combine_typed(const CombineArgs& a, cudaStream_t stream) {
  CombineParams p{a.partial, a.page_max, a.page_sum, a.out, a.bh_count * a.rows, a.pages, a.rows, a.head_dim, 1};
  if (p.total_rows <= 0 || p.head_dim <= 0 || p.pages <= 0) return 0;
  const bool vec4 = a.head_dim % 4 == 0 && aligned16(a.partial) &&
                    (reinterpret_cast<std::uintptr_t>(a.out) % (4 * sizeof(TO))) == 0;
  const std::int64_t units = vec4 ? a.head_dim / 4 : a.head_dim;
  int tpr = 1;
  while (tpr < units && tpr < 64) tpr <<= 1;
  p.tpr = tpr;
  const int block = 256, rows_per_block = block / tpr;
  const std::int64_t blocks = (p.total_rows + rows_per_block - 1) / rows_per_block;
  if (blocks > 0x7fffffff) return static_cast<int>(cudaErrorInvalidConfiguration);
  const RowSink sink{a.sinks, nullptr};
  if (a.sinks.logits) {
    if (vec4) combine_pages_sinks_kernel<TO, true><<<static_cast<unsigned>(blocks), block, 0, stream>>>(p, sink);
    else combine_pages_sinks_kernel<TO, false><<<static_cast<unsigned>(blocks), block, 0, stream>>>(p, sink);
  } else {
    if (vec4) combine_pages_kernel<TO, true><<<static_cast<unsigned>(blocks), block, 0, stream>>>(p);
    else combine_pages_kernel<TO, false><<<static_cast<unsigned>(blocks), block, 0, stream>>>(p);
  }
  return static_cast<int>(cudaGetLastError());
}

struct FinalizeParams {
  const float* acc;
  const float* row_sum;
  void* out;
  std::int64_t total, head_dim;  // total = rows * head_dim elements
};

// `rows`: rows of one item (the sink's head comes from the item and the row within it).
template <class TO, bool VEC4, class Sink>
__device__ __forceinline__ void finalize_rows(const FinalizeParams& p, const Sink& sink, std::int64_t rows) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x * (VEC4 ? 4 : 1);
  TO* out = static_cast<TO*>(p.out);
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * (VEC4 ? 4 : 1);
       i < p.total; i += step) {
    float l = p.row_sum[i / p.head_dim];
    if constexpr (Sink::kAdds) {
      const std::int64_t row = i / p.head_dim;
      l += sink.term(row / rows, row % rows, sink.max_of(row));
    }
    if (VEC4) {
      const float4 x = __ldg(reinterpret_cast<const float4*>(p.acc + i));
      store4<TO>(out + i, make_float4(x.x / l, x.y / l, x.z / l, x.w / l));
    } else {
      out[i] = from_f<TO>(p.acc[i] / l);
    }
  }
}

template <class TO, bool VEC4>
__global__ void finalize_kernel(FinalizeParams p) {
  finalize_rows<TO, VEC4>(p, NoSink{}, 1);
}
template <class TO, bool VEC4>
__global__ void finalize_sinks_kernel(FinalizeParams p, RowSink sink, std::int64_t rows) {
  finalize_rows<TO, VEC4>(p, sink, rows);
}

template <class TO>
int launch_finalize_typed(const FinalizeArgs& a, cudaStream_t stream) {
  FinalizeParams p{a.acc, a.row_sum, a.out, a.bh_count * a.rows * a.head_dim, a.head_dim};
  if (p.total <= 0) return 0;
  const bool vec4 = a.head_dim % 4 == 0 && aligned16(a.acc) &&
                    (reinterpret_cast<std::uintptr_t>(a.out) % (4 * sizeof(TO))) == 0;
  const int block = 256;
  std::int64_t threads = vec4 ? p.total / 4 : p.total;
  std::int64_t blocks = (threads + block - 1) / block;
  if (blocks > 65536) blocks = 65536;
  if (a.sinks.logits) {
    if (!a.row_max || a.rows <= 0) return static_cast<int>(cudaErrorInvalidValue);
    const RowSink sink{a.sinks, a.row_max};
    if (vec4) finalize_sinks_kernel<TO, true><<<static_cast<unsigned>(blocks), block, 0, stream>>>(p, sink, a.rows);
    else finalize_sinks_kernel<TO, false><<<static_cast<unsigned>(blocks), block, 0, stream>>>(p, sink, a.rows);
  } else {
    if (vec4) finalize_kernel<TO, true><<<static_cast<unsigned>(blocks), block, 0, stream>>>(p);
    else finalize_kernel<TO, false><<<static_cast<unsigned>(blocks), block, 0, stream>>>(p);
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int launch_combine_pages(const CombineArgs& a, void* stream) {
  if (a.pages == 1) {
    // One page: the weight e^(m_p - m) is exactly 1, so the combine is O = partial / page_sum, a finalize
    // over [bh*rows, D] (the elementwise kernel measured about twice as fast as the row kernel at P=1).
    FinalizeArgs f;
    f.acc = a.partial;
    f.row_sum = a.page_sum;
    f.row_max = a.page_max;  // one page: its max is the row's
    f.sinks = a.sinks;
    f.bh_count = a.bh_count;
    f.rows = a.rows;
    f.head_dim = a.head_dim;
    f.out = a.out;
    f.out_type = a.out_type;
    return launch_finalize(f, stream);
  }
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (a.out_type) {
    case DType::fp16: return launch_combine_typed<__half>(a, s);
    case DType::bf16: return launch_combine_typed<__nv_bfloat16>(a, s);
    case DType::fp32: return launch_combine_typed<float>(a, s);
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

int launch_finalize(const FinalizeArgs& a, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (a.out_type) {
    case DType::fp16: return launch_finalize_typed<__half>(a, s);
    case DType::bf16: return launch_finalize_typed<__nv_bfloat16>(a, s);
    case DType::fp32: return launch_finalize_typed<float>(a, s);
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

}  // namespace ab::kernels

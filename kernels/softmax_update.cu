// Online-softmax update over one page for a batch of heads (nested, head_batched): per query row, the
// page's scores are read once, probabilities written once, the running max/sum updated and the fp32
// accumulator rescaled by e^(m_old - m_new).
#include "primitive_device.cuh"
#include "primitives.hpp"
#include "row_kernel_launch.cuh"  // dispatch_score_prob, launch_rows

namespace ab::kernels {

namespace {

using namespace dev;

struct SoftmaxUpdateParams {
  const void* scores;
  void* probs;
  float* row_max;
  float* row_sum;
  float* acc;
  std::int64_t score_ld, score_bh_stride, prob_ld, prob_bh_stride;
  std::int64_t total_rows, rows, cols, head_dim, col_offset;
  int G;
  bool first_page, acc_vec4;
  KeyMask mask;
};

// One row of the online-softmax update; Mod: what its scores become first (primitive_device.cuh: NoScoreMod for
// the kernel without a variant, WindowCap for softmax_update_mod_kernel, from the mask's window and soft-cap).
template <class TS, class TP, int CHUNKS, bool VEC, class Mod>
__device__ __forceinline__ void softmax_update_row(const SoftmaxUpdateParams& p) {
  __shared__ float smem[32];
  const int G = CHUNKS > 0 ? p.G : static_cast<int>(blockDim.x);
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / G) + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool active = row < p.total_rows;
  int nvalid = 0, out_len = 0;
  Mod mod{};
  float m_old = -INFINITY, l_old = 0.0f;
  const TS* srow = static_cast<const TS*>(p.scores);
  TP* prow = static_cast<TP*>(p.probs);
  if (active) {
    std::int64_t bh, r;
    if (p.total_rows <= 0x7fffffff) {  // 32-bit index math: far cheaper than 64-bit division
      const unsigned ur = static_cast<unsigned>(row), rows = static_cast<unsigned>(p.rows);
      bh = ur / rows;
      r = ur - static_cast<unsigned>(bh) * rows;
    } else {
      bh = row / p.rows;
      r = row % p.rows;
    }
    std::int64_t nv = key_limit(p.mask, bh, r) - p.col_offset;
    nv = nv < 0 ? 0 : (nv > p.cols ? p.cols : nv);
    nvalid = static_cast<int>(nv);
    if constexpr (kModifies<Mod>) {
      const std::int64_t first = key_first(p.mask, bh, r) - p.col_offset;
      mod.first = static_cast<int>(first < 0 ? 0 : (first > p.cols ? p.cols : first));
      mod.cap = static_cast<float>(p.mask.softcap);
    }
    out_len = static_cast<int>(p.cols);
    srow += bh * p.score_bh_stride + r * p.score_ld;
    prow += bh * p.prob_bh_stride + r * p.prob_ld;
    if (!p.first_page) {
      m_old = p.row_max[row];
      l_old = p.row_sum[row];
    }
  }
  float m, sum;
  if constexpr (CHUNKS > 0)
    row_softmax<TS, TP, CHUNKS, VEC, Mod>(srow, nvalid, prow, out_len, G, lane, smem, m_old, &m, &sum, mod);
  else
    row_softmax_long<TS, TP, Mod>(srow, nvalid, prow, out_len, smem, m_old, &m, &sum, mod);
  if (!active) return;
  const float alpha = m_old == -INFINITY ? 0.0f : expf(m_old - m);
  if (lane == 0) {
    p.row_max[row] = m;
    p.row_sum[row] = l_old * alpha + sum;
  }
  if (p.first_page) return;
  float* acc = p.acc + row * p.head_dim;
  if (p.acc_vec4) {
    float4* a4 = reinterpret_cast<float4*>(acc);
    for (std::int64_t d = lane; d < p.head_dim / 4; d += G) {
      float4 x = a4[d];
      x.x *= alpha; x.y *= alpha; x.z *= alpha; x.w *= alpha;
      a4[d] = x;
    }
  } else {
    for (std::int64_t d = lane; d < p.head_dim; d += G) acc[d] *= alpha;
  }
}

template <class TS, class TP, int CHUNKS, bool VEC>
__global__ void softmax_update_kernel(SoftmaxUpdateParams p) {
  softmax_update_row<TS, TP, CHUNKS, VEC, NoScoreMod>(p);
}
// The same where the mask has a window or a soft-cap.
template <class TS, class TP, int CHUNKS, bool VEC>
__global__ void softmax_update_mod_kernel(SoftmaxUpdateParams p) {
  softmax_update_row<TS, TP, CHUNKS, VEC, WindowCap>(p);
}

template <class TS, class TP>
int launch_typed(const SoftmaxUpdateArgs& a, cudaStream_t stream) {
  SoftmaxUpdateParams p{a.scores, a.probs, a.row_max, a.row_sum, a.acc, a.score_ld, a.score_bh_stride,
                        a.prob_ld, a.prob_bh_stride, a.bh_count * a.rows, a.rows, a.cols, a.head_dim,
                        a.col_offset, 4, a.first_page, false, a.mask};
  if (p.total_rows <= 0 || p.cols <= 0) return 0;
  p.acc_vec4 = a.head_dim % 4 == 0 && aligned16(a.acc);
  RowConfig rc = row_config(a.cols);
  p.G = rc.G;
  const bool vec = aligned16(a.scores) && aligned16(a.probs) && stride_aligned16(a.score_bh_stride, sizeof(TS)) &&
                   stride_aligned16(a.score_ld, sizeof(TS)) && stride_aligned16(a.prob_bh_stride, sizeof(TP)) &&
                   stride_aligned16(a.prob_ld, sizeof(TP));
  return launch_rows(p, p.total_rows, rc, vec, a.mask, stream, [](auto c, auto v, auto modifies) {
    if constexpr (decltype(modifies)::value) return &softmax_update_mod_kernel<TS, TP, decltype(c)::value, decltype(v)::value>;
    else return &softmax_update_kernel<TS, TP, decltype(c)::value, decltype(v)::value>;
  });
}

}  // namespace

int launch_softmax_update(const SoftmaxUpdateArgs& a, void* stream) {
  return dev::dispatch_score_prob(a.score_type, a.prob_type, [&](auto ts, auto tp) {
    return launch_typed<typename decltype(ts)::type, typename decltype(tp)::type>(a, static_cast<cudaStream_t>(stream));
  });
}

}  // namespace ab::kernels

// Page-local softmax over every (head, page, query row) at once, for fully_batched and ptr_array: one
// group of threads a row, scores read once into registers, page-major probabilities written once.
#include "primitive_device.cuh"
#include "primitives.hpp"
#include "row_kernel_launch.cuh"  // dispatch_score_prob, launch_rows

namespace ab::kernels {

namespace {

using namespace dev;

struct PageSoftmaxParams {
  const void* scores;
  void* probs;
  float* page_max;
  float* page_sum;
  std::int64_t score_bh_stride, score_page_stride, score_ld;
  std::int64_t total_rows, pages, rows, page_size, last_page_len;
  int G;
  KeyMask mask;
};

// One row of the page softmax; Mod: what its scores become first (primitive_device.cuh: NoScoreMod for the
// kernel without a variant, WindowCap for page_softmax_mod_kernel, from the mask's window and soft-cap).
template <class TS, class TP, int CHUNKS, bool VEC, class Mod>
__device__ __forceinline__ void page_softmax_row(const PageSoftmaxParams& p) {
  __shared__ float smem[32];
  const int G = CHUNKS > 0 ? p.G : static_cast<int>(blockDim.x);
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / G) + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool active = row < p.total_rows;
  int nvalid = 0, out_len = 0;
  Mod mod{};
  const TS* srow = static_cast<const TS*>(p.scores);
  TP* prow = static_cast<TP*>(p.probs);
  if (active) {
    std::int64_t r, pg, bh;
    if (p.total_rows <= 0x7fffffff) {  // 32-bit index math: far cheaper than 64-bit division
      const unsigned ur = static_cast<unsigned>(row), rows = static_cast<unsigned>(p.rows);
      const unsigned pages = static_cast<unsigned>(p.pages), bp = ur / rows;
      r = ur - bp * rows;
      bh = bp / pages;
      pg = bp - static_cast<unsigned>(bh) * pages;
    } else {
      const std::int64_t bp = row / p.rows;
      r = row % p.rows;
      pg = bp % p.pages;
      bh = bp / p.pages;
    }
    const std::int64_t len = pg == p.pages - 1 ? p.last_page_len : p.page_size;
    std::int64_t nv = key_limit(p.mask, bh, r) - pg * p.page_size;
    nv = nv < 0 ? 0 : (nv > len ? len : nv);
    nvalid = static_cast<int>(nv);
    if constexpr (kModifies<Mod>) {
      const std::int64_t first = key_first(p.mask, bh, r) - pg * p.page_size;
      mod.first = static_cast<int>(first < 0 ? 0 : (first > len ? len : first));
      mod.cap = static_cast<float>(p.mask.softcap);
    }
    out_len = static_cast<int>(p.page_size);
    srow += bh * p.score_bh_stride + pg * p.score_page_stride + r * p.score_ld;
    prow += row * p.page_size;
  }
  float m, sum;
  if constexpr (CHUNKS > 0)
    row_softmax<TS, TP, CHUNKS, VEC, Mod>(srow, nvalid, prow, out_len, G, lane, smem, -INFINITY, &m, &sum, mod);
  else
    row_softmax_long<TS, TP, Mod>(srow, nvalid, prow, out_len, smem, -INFINITY, &m, &sum, mod);
  if (active && lane == 0) {
    p.page_max[row] = m;
    p.page_sum[row] = sum;
  }
}

template <class TS, class TP, int CHUNKS, bool VEC>
__global__ void page_softmax_kernel(PageSoftmaxParams p) {
  page_softmax_row<TS, TP, CHUNKS, VEC, NoScoreMod>(p);
}
// The same where the mask has a window or a soft-cap.
template <class TS, class TP, int CHUNKS, bool VEC>
__global__ void page_softmax_mod_kernel(PageSoftmaxParams p) {
  page_softmax_row<TS, TP, CHUNKS, VEC, WindowCap>(p);
}

template <class TS, class TP>
int launch_typed(const PageSoftmaxArgs& a, cudaStream_t stream) {
  PageSoftmaxParams p{a.scores, a.probs, a.page_max, a.page_sum, a.score_bh_stride, a.score_page_stride,
                      a.score_ld, a.bh_count * a.pages * a.rows, a.pages, a.rows, a.page_size,
                      a.last_page_len, 4, a.mask};
  if (p.total_rows <= 0 || p.page_size <= 0) return 0;
  RowConfig rc = row_config(a.page_size);
  p.G = rc.G;
  const bool vec = aligned16(a.scores) && aligned16(a.probs) && stride_aligned16(a.score_bh_stride, sizeof(TS)) &&
                   stride_aligned16(a.score_page_stride, sizeof(TS)) && stride_aligned16(a.score_ld, sizeof(TS)) &&
                   stride_aligned16(a.page_size, sizeof(TP));
  return launch_rows(p, p.total_rows, rc, vec, a.mask, stream, [](auto c, auto v, auto modifies) {
    if constexpr (decltype(modifies)::value) return &page_softmax_mod_kernel<TS, TP, decltype(c)::value, decltype(v)::value>;
    else return &page_softmax_kernel<TS, TP, decltype(c)::value, decltype(v)::value>;
  });
}

}  // namespace

int launch_page_softmax(const PageSoftmaxArgs& a, void* stream) {
  return dev::dispatch_score_prob(a.score_type, a.prob_type, [&](auto ts, auto tp) {
    return launch_typed<typename decltype(ts)::type, typename decltype(tp)::type>(a, static_cast<cudaStream_t>(stream));
  });
}

}  // namespace ab::kernels

// The launches of the TMA decode kernel (fused_decode_tma.cuh): K/V tensor maps, the shared-memory limit, the
// grid. One instantiation per tile variant x head_dim x query-row slices x dtype, with the attention variants' code
// (window, soft-cap, sinks) or without; fused_decode.cu dispatches here.
#include <cuda_runtime.h>

#include <algorithm>

#include "fused_decode_tma.cuh"
#include "fused_decode_tma_launch.hpp"
#include "kernel_occupancy.cuh"
#include "tensor_map.cuh"

namespace ab::kernels::fused_detail {

namespace {

// K/V tensor maps (contiguous [B*KVH][S][D], boxes of BN rows; paged pool [slots*KVH][page_size][D], boxes of
// min(page_size, 64) rows; whole-row boxes through the 4-D view of the same tensors), then the launch. The
// shared-memory limit is raised once per instantiation.
template <class C, bool BF16, bool VAR>
int launch_decode_tma(const DVarParams& dv, const FusedParams& p, void* stream) {
  const DParamsOf<VAR>& dp = dv;  // the instance without the variants takes the base alone
  constexpr int D = C::D;
  CUtensorMap mk, mv;
  const long long rows = p.paged ? p.page_size : p.seq_len;
  const long long outer = p.paged ? static_cast<long long>(p.pool_slots) * p.kv_heads : static_cast<long long>(p.batch) * p.kv_heads;
  const int box = p.paged ? static_cast<int>(std::min<std::int64_t>(p.page_size, 64)) : C::BN;
  auto encode = C::ROW_BOXES ? &encode_row_blocks_map : &encode_rows_map;
  int e = encode(&mk, p.k, BF16, D, rows, outer, box);
  if (e == 0) e = encode(&mv, p.v, BF16, D, rows, outer, box);
  if (e != 0) return e;
  auto kern = fused_decode_tma<C, BF16, VAR>;
  static const cudaError_t attr = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM);
  if (attr != cudaSuccess) return static_cast<int>(attr);
  const dim3 grid(static_cast<unsigned>(dp.splits), static_cast<unsigned>(dp.kv_heads * dp.chunks),
                  static_cast<unsigned>(dp.batch));
  kern<<<grid, C::THREADS, C::SMEM, static_cast<cudaStream_t>(stream)>>>(dp, mk, mv);
  return static_cast<int>(cudaGetLastError());
}

template <class C, bool BF16, bool VAR>
int decode_tma_ctas_per_sm() {
  return resident_ctas_per_sm(fused_decode_tma<C, BF16, VAR>, C::THREADS, C::SMEM);
}

// The instantiations of one configuration: 1 or 2 m16 slices, fp16 or bf16, with the variants' code or without.
template <class C, bool VAR>
DecodeInstance pick_dtype(bool bf16) {
  if (bf16) return {&launch_decode_tma<C, true, VAR>, &decode_tma_ctas_per_sm<C, true, VAR>};
  return {&launch_decode_tma<C, false, VAR>, &decode_tma_ctas_per_sm<C, false, VAR>};
}
template <int D, int ST, int BN, bool SPLIT, bool RB>
DecodeInstance pick(int mt, bool bf16, bool var) {
  if (mt == 1) return var ? pick_dtype<TCfg<D, 1, ST, BN, SPLIT, RB>, true>(bf16) : pick_dtype<TCfg<D, 1, ST, BN, SPLIT, RB>, false>(bf16);
  return var ? pick_dtype<TCfg<D, 2, ST, BN, SPLIT, RB>, true>(bf16) : pick_dtype<TCfg<D, 2, ST, BN, SPLIT, RB>, false>(bf16);
}
// One slice only (head_dim 256: two would hold 256 accumulators a thread).
template <int D, int ST, int BN, bool SPLIT, bool RB>
DecodeInstance pick_one_slice(int mt, bool bf16, bool var) {
  if (mt != 1) return {};
  return var ? pick_dtype<TCfg<D, 1, ST, BN, SPLIT, RB>, true>(bf16) : pick_dtype<TCfg<D, 1, ST, BN, SPLIT, RB>, false>(bf16);
}

}  // namespace

// Slots per CTA, two CTAs per SM: 64-key tiles, a slot of K and V (32 KB at head_dim 128): 3 slots, 4 at 64;
// 128-key tiles, a slot of K or V (32 KB at 128): 3 slots, 4 at 64 (16 KB each).
DecodeInstance find_decode_tma(int head_dim, int mt, bool bf16, int block_n, bool row_boxes, bool var) {
  if (head_dim == 128) {
    if (block_n == 64) return row_boxes ? pick<128, 3, 64, false, true>(mt, bf16, var) : pick<128, 3, 64, false, false>(mt, bf16, var);
    if (block_n == 128) return row_boxes ? pick<128, 3, 128, true, true>(mt, bf16, var) : pick<128, 3, 128, true, false>(mt, bf16, var);
    return {};
  }
  // head_dim 256 (Gemma 2 and 3): whole-row boxes only (a 64-key tile of 64-column blocks would take 64 copies,
  // more than the producer's lanes), one CTA per SM: three slots of K and V (64 KB each), or of K or V of a
  // 128-key tile.
  if (head_dim == 256 && row_boxes) {
    if (block_n == 64) return pick_one_slice<256, 3, 64, false, true>(mt, bf16, var);
    if (block_n == 128) return pick_one_slice<256, 3, 128, true, true>(mt, bf16, var);
    return {};
  }
  if (head_dim == 64 && !row_boxes) {  // at head_dim 64 a row is one 128-byte block: whole-row boxes change nothing
    if (block_n == 64) return pick<64, 4, 64, false, false>(mt, bf16, var);
    if (block_n == 128) return pick<64, 4, 128, true, false>(mt, bf16, var);
  }
  return {};
}

}  // namespace ab::kernels::fused_detail

// The host side of the warp-specialized Hopper tiles (fused_kernel_ws.cuh): the tensor maps a ws or wsp launch
// passes, the ws launch (its grid: OneBlockPerCta, fused_tile_scheduler.cuh) and its kernel-table entry. Included by
// kernels/fused_attention_ws.cu and, through fused_wsp_launch.cuh, kernels/fused_attention_wsp.cu.
#pragma once
#include "fused_kernel_ws.cuh"

namespace ab::kernels::fused_detail {

// The maps a ws or wsp launch passes: Q/O rows [B*H][q_len] in boxes of BM rows, contiguous K/V
// [B*KVH][seq_len] in boxes of BN, paged K/V the pool [slots*KVH][page_size] (by TMA only where
// ws_pages_by_tma; else the kernel never reads tm_k/tm_v and they are left as Q's map). 0 or the encode error.
template <int D, int BM, int BN, bool BF16>
int encode_ws_maps(const KParams& kp, CUtensorMap* mq, CUtensorMap* mk, CUtensorMap* mv) {
  const long long bh = static_cast<long long>(kp.batch) * kp.heads;
  int e = encode_rows_map(mq, kp.q, BF16, D, kp.q_len, bh, BM);
  if (e != 0) return e;
  *mk = *mq;
  *mv = *mq;
  if (!kp.paged) {
    const long long b_kvh = static_cast<long long>(kp.batch) * kp.kv_heads;
    e = encode_rows_map(mk, kp.k, BF16, D, kp.seq_len, b_kvh, BN);
    if (e == 0) e = encode_rows_map(mv, kp.v, BF16, D, kp.seq_len, b_kvh, BN);
  } else if (ws_pages_by_tma(kp.page_size, BN)) {
    const long long rows_outer = kp.pool_slots * kp.kv_heads;
    const int box = kp.page_size < BN ? kp.page_size : BN;
    e = encode_rows_map(mk, kp.k, BF16, D, kp.page_size, rows_outer, box);
    if (e == 0) e = encode_rows_map(mv, kp.v, BF16, D, kp.page_size, rows_outer, box);
  }
  return e;
}

template <class C, bool BF16, bool VAR>
int launch_ws_instance(const KParamsOf<VAR>& kp, void* stream) {
  CUtensorMap mq, mk, mv;
  const int e = encode_ws_maps<C::D, C::BM, C::BN, BF16>(kp, &mq, &mk, &mv);
  if (e != 0) return e;
  auto kern = fused_attention_fwd_ws<C, BF16, VAR>;
  cudaError_t ce = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM);
  if (ce != cudaSuccess) return static_cast<int>(ce);
  const long long blocks = OneBlockPerCta::grid(kp);
  kern<<<static_cast<unsigned>(blocks), C::THREADS, C::SMEM, static_cast<cudaStream_t>(stream)>>>(kp, mq, mk, mv);
  return static_cast<int>(cudaGetLastError());
}

// A ws tile's launch: the variants' instance where the launch asks for a variant and the tile has it (VARIANTS;
// fused_can_implement refuses the others), else the plain one.
template <class C, bool BF16, bool VARIANTS>
int launch_ws(const KVarParams& kp, void* stream) {
  if constexpr (VARIANTS) {
    if (applies_variants(kp)) return launch_ws_instance<C, BF16, true>(kp, stream);
  }
  return launch_ws_instance<C, BF16, false>(static_cast<const KParams&>(kp), stream);
}

template <class C, bool BF16>
int attrs_ws(cudaFuncAttributes* a) {
  return static_cast<int>(cudaFuncGetAttributes(a, fused_attention_fwd_ws<C, BF16>));
}

// VARIANTS: the tile also has the variants' instance (head_dim 256: no persistent tile has it; Gemma-2).
template <int D, int BN, int ST, bool BF16, bool VARIANTS = false>
constexpr Entry make_entry_ws() {
  using C = WsCfg<D, BN, ST>;
  return Entry{D, FusedTile::prefill_tile(C::BM, BN, C::THREADS / 32, ST, TileFamily::prefill_ws), BF16, C::SMEM, true,
               &launch_ws<C, BF16, VARIANTS>, &attrs_ws<C, BF16>, false, VARIANTS};
}

}  // namespace ab::kernels::fused_detail

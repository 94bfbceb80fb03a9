// The host side of the persistent warp-specialized Hopper tiles (fused_kernel_wsp.cuh): the launch policy (the
// grid: the CTAs that fit at once, at most the walk's units, PersistentWalk in fused_tile_scheduler.cuh; whether
// the tail split runs), the launch and the kernel-table entry. Included by kernels/fused_attention_wsp.cu only.
#pragma once
#include <algorithm>

#include "fused_kernel_wsp.cuh"
#include "fused_ws_launch.cuh"  // encode_ws_maps

namespace ab::kernels::fused_detail {

// The persistent grid: the CTAs that fit on the device at once (one per SM), or fewer where there are
// fewer work units (persistent_units: causal pairs of blocks, else blocks); a developer override
// (fused_dev_hooks.cuh) caps it, so a small problem walks many items.
int wsp_grid_cap();
// tail_split's min_gain: kTailMinGain, or a developer override (fused_dev_hooks.cuh) that lets small
// problems split.
int wsp_tail_min_gain();

// The tail split of a launch of config C on `grid` CTAs (rem 0: none): C may split (TAIL), the problem is
// non-causal with every sequence seq_len long, the workspace has room for this grid's partials, and
// tail_split, at kTailMinGain or the developer override, finds the split worth it.
template <class C>
TailSplit wsp_tail_split(const KParams& kp, long long grid) {
  if (!C::TAIL || !kp.tail_ws || kp.causal || kp.kv_lens || grid > fused_tail::kGridBound) return {};
  const std::int64_t need = fused_tail::workspace_bytes(static_cast<int>(grid), C::BM, C::D);
  if (need == 0 || kp.tail_ws_bytes < need) return {};
  const int min_gain = wsp_tail_min_gain() > 0 ? wsp_tail_min_gain() : kTailMinGain;
  return tail_split(static_cast<int>(grid), kp.m_blocks, kp.batch * kp.heads, (kp.seq_len + C::BN - 1) / C::BN,
                    min_gain);
}

// The CTAs of config C's kernel that fit on the current device at once (one per SM for both of C's kernels: C's
// shared memory is NoTail's and a note per Q buffer), into *fit; 0 or the CUDA error. Asked once per device and
// instance (the occupancy query is not free), devices 0-63 remembered.
template <class C, bool BF16>
int wsp_resident_ctas(int* fit) {
  static int resident[64] = {};
  int dev = 0;
  cudaError_t ce = cudaGetDevice(&dev);
  if (ce != cudaSuccess) return static_cast<int>(ce);
  *fit = dev >= 0 && dev < 64 ? resident[dev] : 0;
  if (*fit > 0) return 0;
  auto kern = fused_attention_fwd_wsp<C, BF16>;
  int sms = 0, per_sm = 0;
  ce = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM);
  if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (ce == cudaSuccess) ce = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, C::THREADS, C::SMEM);
  if (ce != cudaSuccess) return static_cast<int>(ce);
  if (per_sm < 1) return static_cast<int>(cudaErrorInvalidConfiguration);
  *fit = sms * per_sm;
  if (dev >= 0 && dev < 64) resident[dev] = *fit;
  return 0;
}

template <class K, bool BF16, bool VAR = false>
int launch_wsp_kernel(const KParamsOf<VAR>& kp, const CUtensorMap& mq, const CUtensorMap& mk, const CUtensorMap& mv,
                      const CUtensorMap& mo, long long grid, void* stream) {
  auto kern = fused_attention_fwd_wsp<K, BF16, VAR>;
  const cudaError_t ce = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, K::SMEM);
  if (ce != cudaSuccess) return static_cast<int>(ce);
  kern<<<static_cast<unsigned>(grid), K::THREADS, K::SMEM, static_cast<cudaStream_t>(stream)>>>(kp, mq, mk, mv, mo);
  return static_cast<int>(cudaGetLastError());
}

// C's kernel where its walk splits the last round, else C::NoTail's (the same kernel without the split's code); a
// problem with variants runs NoTail's instance that applies them (never split).
template <class C, bool BF16>
int launch_wsp(const KVarParams& kp_in, void* stream) {
  using Plain = typename C::NoTail;
  KVarParams kp = kp_in;
  CUtensorMap mq, mk, mv, mo;
  int e = encode_ws_maps<C::D, C::BM, C::BN, BF16>(kp, &mq, &mk, &mv);  // the ws kernel's maps
  if (e != 0) return e;
  const long long bh = static_cast<long long>(kp.batch) * kp.heads;
  e = encode_rows_map(&mo, kp.o, BF16, C::D, kp.q_len, bh, 16);  // a warp's 16 rows a box
  if (e != 0) return e;
  int fit = 0;
  e = wsp_resident_ctas<C, BF16>(&fit);
  if (e != 0) return e;
  long long grid = std::min<long long>(PersistentWalk::units(kp), fit);
  if (wsp_grid_cap() > 0) grid = std::min<long long>(grid, wsp_grid_cap());
  if (applies_variants(kp)) {
    kp.tail = TailSplit{};
    kp.tail_ws = nullptr;
    return launch_wsp_kernel<Plain, BF16, true>(kp, mq, mk, mv, mo, grid, stream);
  }
  kp.tail = wsp_tail_split<C>(kp, grid);
  if constexpr (C::TAIL) {
    if (kp.tail.rem > 0) return launch_wsp_kernel<C, BF16>(kp, mq, mk, mv, mo, grid, stream);
  }
  kp.tail = TailSplit{};
  kp.tail_ws = nullptr;
  return launch_wsp_kernel<Plain, BF16>(kp, mq, mk, mv, mo, grid, stream);
}

template <class C, bool BF16>
int attrs_wsp(cudaFuncAttributes* a) {
  return static_cast<int>(cudaFuncGetAttributes(a, fused_attention_fwd_wsp<C, BF16>));
}

// TAIL: the tile may split its last round (its launches without a split run the NoTail kernel).
template <int D, int BN, int ST, int CONSUMERS, bool BF16, int QB = 2, bool TAIL = false>
constexpr Entry make_entry_wsp() {
  using C = WspCfg<D, BN, ST, CONSUMERS, QB, TAIL>;
  return Entry{D, FusedTile::prefill_tile(C::BM, BN, C::THREADS / 32, ST, TileFamily::prefill_wsp), BF16, C::SMEM, true,
               &launch_wsp<C, BF16>, &attrs_wsp<C, BF16>, C::TAIL, /*variants=*/true};
}

}  // namespace ab::kernels::fused_detail

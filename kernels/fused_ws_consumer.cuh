// The consumer step of the warp-specialized Hopper kernels (ws, wsp): one key tile of a consumer warpgroup,
// its barrier waits and releases around WgStep's S = Q K^T, softmax and P V (fused_wg_step.cuh), and the last
// tile's P V. The caller says where the tile sits in the ring (stages, round parities) and whether cp.async
// wrote it (a proxy fence first).
#pragma once
#include <cstdint>
#include <type_traits>

#include "fused_wg_step.cuh"  // WgStep, WgRowGeom, NoTurns, fence_proxy_async
#include "mbarrier_tma.cuh"   // mbar_wait, mbar_arrive

namespace ab::kernels::fused_detail {

#ifdef AB_FUSED_WGMMA
// Key tile j in stage s, with tile j-1's V in stage sp where has_pv; round_k() and round_v(): the parities of
// their stages' rounds (called where the waits need them); by_copy (by value: a reference moves ptxas's code):
// the item's first tile written by cp.async (ws_first_copy_tile; from it on, a proxy fence first) or a test of
// a tile index. K_j's stage is released once S_j has landed, V_{j-1}'s once its product has. dq, dk, dv: the
// descriptors of this warpgroup's Q rows and of stage 0 of K and of V; extra: WgStep::step's turns and K-row
// source.
template <int BM, int TILE_BYTES, class Step, class Bars, class RoundK, class RoundV, class ByCopy, class... Extra>
__device__ __forceinline__ void ws_tile_step(Step& w, const Bars& bars, std::uint64_t dq, std::uint64_t dk,
                                             std::uint64_t dv, bool has_pv, int j, int s, int sp,
                                             const RoundK& round_k, const RoundV& round_v, ByCopy by_copy,
                                             const typename Step::Geom& rg, float sl2, float (&row_max)[2],
                                             float (&row_sum)[2], const Extra&... extra) {
  mbar_wait(bars.full_k(s), round_k());
  if (has_pv) mbar_wait(bars.full_v(sp), round_v());
  // cp.async wrote tile j or j-1 (whose V is read now) through the generic proxy; the cp.async tiles are an
  // item's last ones, so j is one where j-1 is.
  if constexpr (std::is_integral_v<ByCopy>) {  // the wsp kernel's spelling
    if (j >= by_copy) fence_proxy_async();
  } else {  // the ws kernel's test (t >= first spelled !(t < first): ptxas gives it the opposite branch polarity)
    if (by_copy(j)) fence_proxy_async();
  }
  w.template s_descs<BM>(dq, dk + static_cast<std::uint64_t>((s * TILE_BYTES) >> 4));
  w.v_descs(dv + static_cast<std::uint64_t>((sp * TILE_BYTES) >> 4));
  w.step(
      has_pv, j, rg, sl2, row_max, row_sum,
      [&] { mbar_arrive(bars.empty_k(s)); },  // K_j read: the producer may refill its slot
      [&] {
        if (has_pv) mbar_arrive(bars.empty_v(sp));  // V_{j-1} read
      },
      extra...);
}
// The last tile's P V: tile j's V in stage sl (round(): its round's parity), fenced first where cp.async wrote it.
template <int TILE_BYTES, class Step, class Bars, class Round, class ByCopy, class Turns = NoTurns>
__device__ __forceinline__ void ws_last_pv(Step& w, const Bars& bars, std::uint64_t dv, int j, int sl,
                                           const Round& round, ByCopy by_copy, const Turns& turns = Turns{}) {
  mbar_wait(bars.full_v(sl), round());
  if constexpr (std::is_integral_v<ByCopy>) {  // the wsp kernel's spelling
    if (j >= by_copy) fence_proxy_async();
  } else {  // the ws kernel's test (t >= first spelled !(t < first): ptxas gives it the opposite branch polarity)
    if (by_copy(j)) fence_proxy_async();
  }
  w.v_descs(dv + static_cast<std::uint64_t>((sl * TILE_BYTES) >> 4));
  w.last_pv(turns);
}
#endif

}  // namespace ab::kernels::fused_detail

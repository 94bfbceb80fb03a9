// Shared memory of the warp-specialized Hopper kernels (ws, wsp) as structs whose member offsets the compiler
// computes: the Q buffers, the K/V ring, the barriers, the persistent kernel's item notes and its O staging
// tile; and the barriers' addresses (WsBars) and initialisation. The kernels address shared memory through
// 32-bit addresses (TMA, mbarrier, wgmma descriptors), so they read these offsets (WsRingOffsets, WspCfg's
// NOTES / O_OFFSET) and add them to the CTA's 1024-byte aligned base.
#pragma once
#include <cstddef>  // offsetof
#include <cstdint>

#include "mbarrier_tma.cuh"  // mbar_init

namespace ab::kernels::fused_detail {

// The Q buffers' barriers: a full barrier each (TMA bytes), and with EMPTY an empty barrier each (the
// persistent kernel's consumers hand a buffer back).
template <int QB, bool EMPTY_>
struct WsQBarriers {
  static constexpr bool EMPTY = true;
  std::uint64_t full[QB];
  std::uint64_t empty[QB];
};
template <int QB>
struct WsQBarriers<QB, false> {
  static constexpr bool EMPTY = false;
  std::uint64_t full[QB];
};

// Q buffers, the K and V rings of ST stages, then every barrier (8 bytes each): Q's, then full/empty of K
// and of V per stage. Every member's size is a multiple of 8: no padding.
template <int Q_BYTES, int QB, bool Q_EMPTY, int TILE_BYTES, int ST>
struct WsRingSmem {
  static constexpr int Q_BUFFERS = QB, STAGES = ST;
  static constexpr bool Q_EMPTY_BARRIERS = Q_EMPTY;
  unsigned char q[QB][Q_BYTES];
  unsigned char k[ST][TILE_BYTES];
  unsigned char v[ST][TILE_BYTES];
  WsQBarriers<QB, Q_EMPTY> q_bars;
  std::uint64_t full_k[ST];
  std::uint64_t empty_k[ST];
  std::uint64_t full_v[ST];
  std::uint64_t empty_v[ST];
};

// A ring followed by per-Q-buffer notes of the producer (Notes: a struct of arrays, or none).
template <class Ring, class Notes>
struct WsHeadSmem {
  Ring ring;
  Notes notes;
};
// A head followed by a 1024-byte aligned O staging tile of O_BYTES (0: none, O is staged elsewhere).
template <class Head, int O_BYTES>
struct WsOTileSmem {
  Head head;
  alignas(1024) unsigned char o[O_BYTES];
};
template <class Head>
struct WsOTileSmem<Head, 0> {
  Head head;
};

// The offset of a WsQBarriers' empty barriers (0 where it has none).
template <class QBars>
constexpr std::size_t ws_empty_q_offset() {
  if constexpr (QBars::EMPTY) return offsetof(QBars, empty);
  return 0;
}

// Byte offsets of a ring's parts from the CTA's aligned base, and the dynamic shared memory a launch asks for
// (1024 bytes of alignment slack, then the layout).
template <class Ring>
struct WsRingOffsets {
  static constexpr int Q_BUFFERS = Ring::Q_BUFFERS, STAGES = Ring::STAGES;
  static constexpr bool Q_EMPTY_BARRIERS = Ring::Q_EMPTY_BARRIERS;
  static constexpr std::uint32_t K = offsetof(Ring, k);
  static constexpr std::uint32_t V = offsetof(Ring, v);
  static constexpr std::uint32_t BARRIERS = offsetof(Ring, q_bars);
  static constexpr std::uint32_t FULL_Q = BARRIERS + offsetof(decltype(Ring::q_bars), full);
  static constexpr std::uint32_t EMPTY_Q = BARRIERS + ws_empty_q_offset<decltype(Ring::q_bars)>();
  static constexpr std::uint32_t FULL_K = offsetof(Ring, full_k);
  static constexpr std::uint32_t EMPTY_K = offsetof(Ring, empty_k);
  static constexpr std::uint32_t FULL_V = offsetof(Ring, full_v);
  static constexpr std::uint32_t EMPTY_V = offsetof(Ring, empty_v);
  static constexpr std::uint32_t END = sizeof(Ring);
};

// The barriers of a ring at `base`, the CTA's aligned shared-memory address (Off: its WsRingOffsets).
template <class Off>
struct WsBars {
  std::uint32_t base;
  __device__ __forceinline__ std::uint32_t full_q(int qb) const { return base + Off::FULL_Q + 8u * qb; }
  __device__ __forceinline__ std::uint32_t empty_q(int qb) const { return base + Off::EMPTY_Q + 8u * qb; }
  __device__ __forceinline__ std::uint32_t full_k(int s) const { return base + Off::FULL_K + 8u * s; }
  __device__ __forceinline__ std::uint32_t empty_k(int s) const { return base + Off::EMPTY_K + 8u * s; }
  __device__ __forceinline__ std::uint32_t full_v(int s) const { return base + Off::FULL_V + 8u * s; }
  __device__ __forceinline__ std::uint32_t empty_v(int s) const { return base + Off::EMPTY_V + 8u * s; }
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// Every barrier of a ring, by one thread (a CTA-wide barrier must follow before anyone waits on them): a full
// barrier takes one arrive (TMA's bytes, or the producer's one arrive after cp.async), an empty barrier one from
// each of the consumer_threads.
template <class Off>
__device__ __forceinline__ void ws_init_barriers(const WsBars<Off>& bars, std::uint32_t consumer_threads) {
  for (int qb = 0; qb < Off::Q_BUFFERS; ++qb) {
    mbar_init(bars.full_q(qb), 1);
    if constexpr (Off::Q_EMPTY_BARRIERS) mbar_init(bars.empty_q(qb), consumer_threads);
  }
  for (int s = 0; s < Off::STAGES; ++s) {
    mbar_init(bars.full_k(s), 1);
    mbar_init(bars.full_v(s), 1);
    mbar_init(bars.empty_k(s), consumer_threads);
    mbar_init(bars.empty_v(s), consumer_threads);
  }
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
#endif

// The O staging tile's offset in a WsOTileSmem that has one (HAS), else 0.
template <class Smem, bool HAS>
constexpr std::size_t ws_o_offset() {
  if constexpr (HAS) return offsetof(Smem, o);
  return 0;
}
// The piece notes' offset in a notes struct that has them (HAS), else 0.
template <class Notes, bool HAS>
constexpr std::size_t ws_pieces_offset() {
  if constexpr (HAS) return offsetof(Notes, piece);
  return 0;
}

}  // namespace ab::kernels::fused_detail

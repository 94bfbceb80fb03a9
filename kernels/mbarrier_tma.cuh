// The Hopper mbarrier and TMA instructions the TMA kernels share (fused_kernel_ws.cuh, fused_decode_tma.cuh):
// barrier init, arrive (with an expected byte count), parity wait, cp.async tracking, and the 3-D and 4-D tensor
// copies.
// Device code for compute capability 9.0 and above only.
#pragma once
#include <cuda.h>  // CUtensorMap (the type only)

#include <cstdint>

namespace ab::kernels::fused_detail {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spins until the phase of parity `parity` of the barrier has completed (the loop inside the asm: no
// branch in the C++ control flow around the wgmma issue).
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// Makes `bar` track this thread's earlier cp.async copies: its pending count rises by one now and falls
// when they have landed (so the phase cannot complete before them).
__device__ __forceinline__ void mbar_track_cp_async(std::uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
// One TMA box (64 columns x box rows at (col, row, outer)) into shared memory, completing on `bar`.
__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const CUtensorMap& map, int col, int row, int bh,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(col), "r"(row), "r"(bh), "r"(bar)
      : "memory");
}
// One TMA box of whole rows from a 4-D map [outer][rows][D/64][64] (encode_row_blocks_map): every 64-column
// block of `box rows` rows from (row, outer), completing on `bar`.
__device__ __forceinline__ void tma_load_4d(std::uint32_t dst, const CUtensorMap& map, int row, int outer,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %2, %3, %4}], [%5];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(0), "r"(row), "r"(outer), "r"(bar)
      : "memory");
}
#endif

}  // namespace ab::kernels::fused_detail

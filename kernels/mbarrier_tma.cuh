// The Hopper mbarrier and TMA instructions the TMA kernels share (fused_kernel_ws.cuh, fused_decode_tma.cuh):
// barrier init, arrive (with an expected byte count), parity wait, cp.async tracking, the 3-D and 4-D tensor
// copies, and the 3-D tensor store with its bulk-group commit and wait.
// Device code for compute capability 9.0 and above only.
#pragma once
#include <cuda.h>  // CUtensorMap (the type only)

#include <cstdint>
#ifdef AB_MBAR_WATCHDOG
#include <cstdio>  // device printf
#endif

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
#ifndef AB_MBAR_WATCHDOG
// Spins until the phase of parity `parity` of the barrier has completed (the loop inside the asm: no
// branch in the C++ control flow around the wgmma issue).
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
#else
// The developer build's wait (cmake -DATTNBENCH_MBAR_WATCHDOG=ON): one that has not passed after 2 s prints
// the block, the thread, the barrier (its shared address and the dynamic shared memory's base), the parity
// waited for and the barrier's raw word, gives the other stuck threads 0.5 s to print theirs, and traps. A
// pipeline hang becomes a report and a launch error. The loop is in C++ here: the timing of the waits changes.
__device__ __forceinline__ bool mbar_try_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok != 0;
}
__device__ __forceinline__ std::uint64_t mbar_global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}
__device__ __noinline__ void mbar_stuck(std::uint32_t bar, std::uint32_t parity) {
  extern __shared__ unsigned char ab_watchdog_smem[];
  std::uint64_t word;
  asm volatile("ld.shared.b64 %0, [%1];\n" : "=l"(word) : "r"(bar) : "memory");
  const std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(ab_watchdog_smem));
  printf("mbar stuck: block %d thread %d bar 0x%x (smem base 0x%x) parity %u word 0x%016llx\n",
         static_cast<int>(blockIdx.x), static_cast<int>(threadIdx.x), bar, base, parity,
         static_cast<unsigned long long>(word));
  const std::uint64_t t0 = mbar_global_ns();
  while (mbar_global_ns() - t0 < 500000000ull) {
  }
  __trap();
}
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  if (mbar_try_wait(bar, parity)) return;
  const std::uint64_t t0 = mbar_global_ns();
  while (!mbar_try_wait(bar, parity))
    if (mbar_global_ns() - t0 > 2000000000ull) mbar_stuck(bar, parity);
}
#endif
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
// One TMA box (64 columns x box rows) from shared memory to (col, row, outer) of the map's tensor; rows and
// columns outside the tensor are not written. The source must hold still until bulk_wait_read says it was read.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap& map, std::uint32_t src, int col, int row, int outer) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(&map)),
               "r"(col), "r"(row), "r"(outer), "r"(src)
               : "memory");
}
// Closes this thread's stores issued since the last commit into one bulk group.
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's bulk groups still read their shared-memory sources.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
#endif

}  // namespace ab::kernels::fused_detail

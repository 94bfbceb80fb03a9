// The mma.sync kernels' PTX wrappers (sm_80+): shared-memory addresses, 16-byte cp.async and its groups,
// ldmatrix (plain and transposed), mma.sync m16n8k16 with fp32 accumulators, ex2.approx and the fp32 pair to
// fp16x2/bf16x2 conversion. Included through fused_kernel.cuh by every fused kernel (the Hopper ones use ex2,
// pack2, smem_u32 and cp.async too).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace ab::kernels::fused_detail {

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte async copy global -> shared; with valid == false nothing is read and the 16 bytes are zeroed.
__device__ __forceinline__ void cp_async16(std::uint32_t dst, const void* src, bool valid) {
  const int src_size = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_size)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldsm_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_t(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

template <bool BF16>
__device__ __forceinline__ void mma16816(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
  if constexpr (BF16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// A soft-capped raw score, cap_out * tanh(s * cap_in), with the hardware's one-instruction tanh (MUFU, max
// relative error about 2^-11, as FlashAttention and FlashInfer cap): tanhf costs about twenty instructions a score,
// which made Gemma-2's cap 38% of a D=256 prefill on an H200 (0.65 -> 0.90 ms, fbd5a53).
__device__ __forceinline__ float soft_cap(float s, float cap_in, float cap_out) {
  float t;
  asm("tanh.approx.f32 %0, %1;\n" : "=f"(t) : "f"(s * cap_in));
  return cap_out * t;
}

// Two floats to a packed pair (lo = a, the lower column), rounded to nearest.
template <bool BF16>
__device__ __forceinline__ std::uint32_t pack2(float a, float b) {
  std::uint32_t r;
  if constexpr (BF16) {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(b), "f"(a));
  } else {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(b), "f"(a));
  }
  return r;
}

}  // namespace ab::kernels::fused_detail

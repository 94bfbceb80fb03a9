// The Hopper wgmma.mma_async instructions the wgmma kernels issue (fused_wg_step.cuh): m64nNk16, fp16 or bf16
// inputs, fp32 accumulate, as Wgmma<N, BF16>::ss and ::rs. SS: A and B from shared memory (both K-major). RS: A
// from registers, B from shared memory N-major (imm-trans-b = 1). d[j][e] is n8 tile j, element e (mma.sync C
// layout per warp). Always D += A*B (scale-d is the immediate 1, no predicate register: every operand register must
// be defined before the first MMA of a batch, or ptxas serializes them). N = 256 has RS only: the P V of head_dim 256
// (session 24); N = 160 SS only: the S of 160-key tiles (session 32). One macro writes each instruction (its text
// and its operand list), so the eight variants differ only in their arguments.
#pragma once
#include <cstdint>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define AB_WG_ASM(...) asm volatile(__VA_ARGS__)
#else
#define AB_WG_ASM(...) ((void)0)  // built without sm_90a: the kernels that call these refuse such devices
#endif

// The accumulators in the instruction text: {%0, .., %(R-1)} for R = 4 x the n8 tiles, in groups of eight.
#define AB_WG_G0 "%0,%1,%2,%3,%4,%5,%6,%7"
#define AB_WG_G1 "%8,%9,%10,%11,%12,%13,%14,%15"
#define AB_WG_G2 "%16,%17,%18,%19,%20,%21,%22,%23"
#define AB_WG_G3 "%24,%25,%26,%27,%28,%29,%30,%31"
#define AB_WG_G4 "%32,%33,%34,%35,%36,%37,%38,%39"
#define AB_WG_G5 "%40,%41,%42,%43,%44,%45,%46,%47"
#define AB_WG_G6 "%48,%49,%50,%51,%52,%53,%54,%55"
#define AB_WG_G7 "%56,%57,%58,%59,%60,%61,%62,%63"
#define AB_WG_G8 "%64,%65,%66,%67,%68,%69,%70,%71"
#define AB_WG_G9 "%72,%73,%74,%75,%76,%77,%78,%79"
#define AB_WG_G10 "%80,%81,%82,%83,%84,%85,%86,%87"
#define AB_WG_G11 "%88,%89,%90,%91,%92,%93,%94,%95"
#define AB_WG_G12 "%96,%97,%98,%99,%100,%101,%102,%103"
#define AB_WG_G13 "%104,%105,%106,%107,%108,%109,%110,%111"
#define AB_WG_G14 "%112,%113,%114,%115,%116,%117,%118,%119"
#define AB_WG_G15 "%120,%121,%122,%123,%124,%125,%126,%127"
#define AB_WG_REGS_32 "{" AB_WG_G0 "," AB_WG_G1 "," AB_WG_G2 "," AB_WG_G3 "}"
#define AB_WG_REGS_64 "{" AB_WG_G0 "," AB_WG_G1 "," AB_WG_G2 "," AB_WG_G3 "," AB_WG_G4 "," AB_WG_G5 "," AB_WG_G6 "," AB_WG_G7 "}"
#define AB_WG_REGS_80 "{" AB_WG_G0 "," AB_WG_G1 "," AB_WG_G2 "," AB_WG_G3 "," AB_WG_G4 "," AB_WG_G5 "," AB_WG_G6 "," AB_WG_G7 "," AB_WG_G8 "," AB_WG_G9 "}"
#define AB_WG_REGS_128 "{" AB_WG_G0 "," AB_WG_G1 "," AB_WG_G2 "," AB_WG_G3 "," AB_WG_G4 "," AB_WG_G5 "," AB_WG_G6 "," AB_WG_G7 "," AB_WG_G8 "," AB_WG_G9 "," AB_WG_G10 "," AB_WG_G11 "," AB_WG_G12 "," AB_WG_G13 "," AB_WG_G14 "," AB_WG_G15 "}"

// The accumulators as operands: "+f"(d[t][e]) for the n8 tiles t of the instruction.
#define AB_WG_T1(t) "+f"(d[t][0]), "+f"(d[t][1]), "+f"(d[t][2]), "+f"(d[t][3])
#define AB_WG_T2(t) AB_WG_T1(t), AB_WG_T1(t + 1)
#define AB_WG_T4(t) AB_WG_T2(t), AB_WG_T2(t + 2)
#define AB_WG_T8(t) AB_WG_T4(t), AB_WG_T4(t + 4)
#define AB_WG_T16(t) AB_WG_T8(t), AB_WG_T8(t + 8)
#define AB_WG_OPS_8 AB_WG_T8(0)
#define AB_WG_OPS_16 AB_WG_T16(0)
#define AB_WG_OPS_20 AB_WG_T16(0), AB_WG_T4(16)
#define AB_WG_OPS_32 AB_WG_T16(0), AB_WG_T16(16)

// D (TILES n8 tiles, R registers) += A B for an n = N instruction on TY ("f16" or "bf16") inputs. SS: descriptors
// of A and B as operands %A and %B. RS: A's four registers %A0..%A3, B's descriptor %B.
#define AB_WGMMA_SS(N, TY, TILES, R, A, B)                                                                     \
  static __device__ __forceinline__ void ss(float (&d)[TILES][4], std::uint64_t da, std::uint64_t db) {         \
    (void)d;                                                                                                   \
    (void)da;                                                                                                  \
    (void)db;                                                                                                  \
    AB_WG_ASM("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " " AB_WG_REGS_##R ", %" #A ", %" #B   \
              ", 1, 1, 1, 0, 0;\n"                                                                             \
              : AB_WG_OPS_##TILES                                                                              \
              : "l"(da), "l"(db));                                                                             \
  }
#define AB_WGMMA_RS(N, TY, TILES, R, A0, A1, A2, A3, B)                                                        \
  static __device__ __forceinline__ void rs(float (&d)[TILES][4], const std::uint32_t (&a)[4], std::uint64_t db) { \
    (void)d;                                                                                                   \
    (void)a;                                                                                                   \
    (void)db;                                                                                                  \
    AB_WG_ASM("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " " AB_WG_REGS_##R ", {%" #A0 ",%" #A1  \
              ",%" #A2 ",%" #A3 "}, %" #B ", 1, 1, 1, 1;\n"                                                   \
              : AB_WG_OPS_##TILES                                                                              \
              : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));                                          \
  }

namespace ab::kernels::fused_detail {

template <int N, bool BF16>
struct Wgmma;

template <> struct Wgmma<64, false> { AB_WGMMA_SS(64, "f16", 8, 32, 32, 33) AB_WGMMA_RS(64, "f16", 8, 32, 32, 33, 34, 35, 36) };
template <> struct Wgmma<64, true> { AB_WGMMA_SS(64, "bf16", 8, 32, 32, 33) AB_WGMMA_RS(64, "bf16", 8, 32, 32, 33, 34, 35, 36) };
template <> struct Wgmma<128, false> { AB_WGMMA_SS(128, "f16", 16, 64, 64, 65) AB_WGMMA_RS(128, "f16", 16, 64, 64, 65, 66, 67, 68) };
template <> struct Wgmma<128, true> { AB_WGMMA_SS(128, "bf16", 16, 64, 64, 65) AB_WGMMA_RS(128, "bf16", 16, 64, 64, 65, 66, 67, 68) };
template <> struct Wgmma<160, false> { AB_WGMMA_SS(160, "f16", 20, 80, 80, 81) };  // S of 160-key tiles only
template <> struct Wgmma<160, true> { AB_WGMMA_SS(160, "bf16", 20, 80, 80, 81) };
template <> struct Wgmma<256, false> { AB_WGMMA_RS(256, "f16", 32, 128, 128, 129, 130, 131, 132) };  // P V at D=256 only
template <> struct Wgmma<256, true> { AB_WGMMA_RS(256, "bf16", 32, 128, 128, 129, 130, 131, 132) };

}  // namespace ab::kernels::fused_detail

#undef AB_WGMMA_SS
#undef AB_WGMMA_RS
#undef AB_WG_G0
#undef AB_WG_G1
#undef AB_WG_G2
#undef AB_WG_G3
#undef AB_WG_G4
#undef AB_WG_G5
#undef AB_WG_G6
#undef AB_WG_G7
#undef AB_WG_G8
#undef AB_WG_G9
#undef AB_WG_G10
#undef AB_WG_G11
#undef AB_WG_G12
#undef AB_WG_G13
#undef AB_WG_G14
#undef AB_WG_G15
#undef AB_WG_REGS_32
#undef AB_WG_REGS_64
#undef AB_WG_REGS_80
#undef AB_WG_REGS_128
#undef AB_WG_T1
#undef AB_WG_T2
#undef AB_WG_T4
#undef AB_WG_T8
#undef AB_WG_T16
#undef AB_WG_OPS_8
#undef AB_WG_OPS_16
#undef AB_WG_OPS_20
#undef AB_WG_OPS_32
#undef AB_WG_ASM

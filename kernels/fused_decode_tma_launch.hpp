// The TMA decode kernel's instances (kernels/fused_decode_tma.cu) as fused_decode.cu dispatches them: a launch
// and an occupancy per compiled variant, found by head_dim, query-row slices, keys per tile and box shape. Internal
// to kernels/; no CUDA headers.
#pragma once

#include "fused_attention.hpp"

namespace ab::kernels::fused_detail {

struct DVarParams;
using DecodeLaunchFn = int (*)(const DVarParams&, const FusedParams&, void*);
// One compiled decode instance: its launch, and its resident CTAs per SM (kernel_occupancy.cuh; 0: unknown).
struct DecodeInstance {
  DecodeLaunchFn launch = nullptr;
  int (*ctas_per_sm)() = nullptr;
};

// The TMA decode instance for head_dim `head_dim`, `mt` m16 slices of query rows, `block_n` keys per tile (64,
// or 128 with the split K/V ring) and whole-row boxes or not, `var`: the instance that applies the window,
// soft-cap and sinks; empty where that variant is not compiled (head_dim other than 64, 128 and 256, block_n other
// than 64 and 128, whole-row boxes at head_dim 64, 64-column boxes at 256).
DecodeInstance find_decode_tma(int head_dim, int mt, bool bf16, int block_n, bool row_boxes, bool var);

}  // namespace ab::kernels::fused_detail

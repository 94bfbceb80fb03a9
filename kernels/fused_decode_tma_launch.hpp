// The TMA decode kernel's launches (kernels/fused_decode_tma.cu) as fused_decode.cu dispatches them: one
// function per compiled variant, found by head_dim, query-row slices, keys per tile and box shape. Internal
// to kernels/; no CUDA headers.
#pragma once

#include "fused_attention.hpp"

namespace ab::kernels::fused_detail {

struct DVarParams;
using DecodeLaunchFn = int (*)(const DVarParams&, const FusedParams&, void*);

// The TMA decode launch for head_dim `head_dim`, `mt` m16 slices of query rows, `block_n` keys per tile (64,
// or 128 with the split K/V ring) and whole-row boxes or not, `var`: the instance that applies the window,
// soft-cap and sinks; nullptr where that variant is not compiled (head_dim other than 64 and 128, block_n other
// than 64 and 128, whole-row boxes at head_dim 64).
DecodeLaunchFn find_decode_tma_launch(int head_dim, int mt, bool bf16, int block_n, bool row_boxes, bool var);

}  // namespace ab::kernels::fused_detail

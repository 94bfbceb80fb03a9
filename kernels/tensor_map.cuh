// The TMA tensor-map encoding the TMA kernels share (defined in fused_attention_ws.cu, through the driver
// entry point the runtime hands out: no -lcuda link).
#pragma once
#include <cuda.h>  // CUtensorMap (the type only)

namespace ab::kernels::fused_detail {

// A [outer][rows][D] fp16/bf16 tensor map with boxes of 64 columns x box_rows rows x 1, 128-byte swizzle
// (rows past `rows` and past `outer` are zero-filled by the copy). Returns a cudaError_t value (0 on success).
int encode_rows_map(CUtensorMap* map, const void* base, bool bf16, int head_dim, long long rows, long long outer,
                    int box_rows);

}  // namespace ab::kernels::fused_detail

// The TMA tensor-map encoding the TMA kernels share (defined in fused_attention_ws.cu, through the driver
// entry point the runtime hands out: no -lcuda link).
#pragma once
#include <cuda.h>  // CUtensorMap (the type only)

namespace ab::kernels::fused_detail {

// A [outer][rows][D] fp16/bf16 tensor map with boxes of 64 columns x box_rows rows x 1, 128-byte swizzle
// (rows past `rows` and past `outer` are zero-filled by the copy). Returns a cudaError_t value (0 on success).
int encode_rows_map(CUtensorMap* map, const void* base, bool bf16, int head_dim, long long rows, long long outer,
                    int box_rows);

// The same [outer][rows][D] tensor with each row seen as D/64 blocks of 64 columns ([outer][rows][D/64][64]):
// one box brings box_rows whole rows (every 64-column block of each) in address order, in shared memory as
// 128-byte lines (line = row * D/64 + block), each swizzled by its index mod 8 (128-byte swizzle).
int encode_row_blocks_map(CUtensorMap* map, const void* base, bool bf16, int head_dim, long long rows,
                          long long outer, int box_rows);

}  // namespace ab::kernels::fused_detail

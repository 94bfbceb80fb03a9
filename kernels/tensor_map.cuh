// The TMA tensor-map encoding the TMA kernels share (defined in fused_attention_ws.cu, through the driver
// entry point the runtime hands out: no -lcuda link).
#pragma once
#include <cuda.h>  // CUtensorMap (the type only)

namespace ab::kernels::fused_detail {

// A [outer][rows][D] fp16/bf16 tensor map with boxes of 64 columns x box_rows rows x 1, 128-byte swizzle
// (rows past `rows` and past `outer` are zero-filled by the copy); `l2_256`: 256-byte L2 promotion (else 128). Returns a cudaError_t value (0 on success).
int encode_rows_map(CUtensorMap* map, const void* base, bool bf16, int head_dim, int seq_len, long long bh,
                    int box_rows, bool l2_256 = false);

// The same [outer][rows][D] tensor with each row seen as D/64 blocks of 64 columns ([outer][rows][D/64][64]):
// one box brings box_rows whole rows (every 64-column block of each), in shared memory as row-major lines of
// 128 bytes (line = row * D/64 + block), each line swizzled by its index mod 8. `l2_256`: 256-byte L2
// promotion (else 128).
int encode_row_blocks_map(CUtensorMap* map, const void* base, bool bf16, int head_dim, int rows, long long outer,
                          int box_rows, bool l2_256);

}  // namespace ab::kernels::fused_detail

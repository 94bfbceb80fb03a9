// Warp-specialized Hopper fused attention tiles (fused_kernel_ws.cuh): m128n128w12s2ws for head_dim 128
// (the default there since run 5 of docs/perf-notes.md), m128n64w12s3ws for 64 (slower than m128n64w8s2
// at S=512: one CTA per SM; searched by tune), m128n64w12s2ws for 256 (the default there: 64 KB of Q and two
// 64 KB stages fit, two Q buffers of the persistent kernel would not; session 24, H200, B=8 H=16 S=2048:
// 2.6x the mma.sync tile, 1.05x cuDNN); and the TMA descriptor encoding they launch with, through
// the driver entry point the runtime hands out (no -lcuda link). The D=64 instance of m128n128w12s2ws was
// dropped after run 5 (0.0996 ms at S=512, behind m128n64w8s2's 0.0911; it would have led the D=64 order).
#include "fused_ws_launch.cuh"

namespace ab::kernels::fused_detail {

namespace {

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiledFn encode_tiled_fn() {
  static const EncodeTiledFn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return static_cast<EncodeTiledFn>(nullptr);
    }
    return reinterpret_cast<EncodeTiledFn>(f);
  }();
  return fn;
}

}  // namespace

int encode_rows_map(CUtensorMap* map, const void* base, bool bf16, int head_dim, long long rows,
                    long long rows_outer, int box_rows) {
  const EncodeTiledFn fn = encode_tiled_fn();
  if (!fn) return static_cast<int>(cudaErrorNotSupported);
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(head_dim), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(rows_outer)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(head_dim) * 2,
                                 static_cast<cuuint64_t>(rows) * static_cast<cuuint64_t>(head_dim) * 2};
  const cuuint32_t box[3] = {64, static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUresult r = fn(map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3,
                        const_cast<void*>(base), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : static_cast<int>(cudaErrorInvalidValue);
}

int encode_row_blocks_map(CUtensorMap* map, const void* base, bool bf16, int head_dim, long long rows,
                          long long outer, int box_rows) {
  const EncodeTiledFn fn = encode_tiled_fn();
  if (!fn) return static_cast<int>(cudaErrorNotSupported);
  const cuuint64_t dims[4] = {64, static_cast<cuuint64_t>(head_dim / 64), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(outer)};
  const cuuint64_t strides[3] = {128, static_cast<cuuint64_t>(head_dim) * 2,
                                 static_cast<cuuint64_t>(rows) * static_cast<cuuint64_t>(head_dim) * 2};
  const cuuint32_t box[4] = {64, static_cast<cuuint32_t>(head_dim / 64), static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = fn(map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
                        const_cast<void*>(base), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : static_cast<int>(cudaErrorInvalidValue);
}

const Entry* entries_ws(int* count) {
  static const Entry e[] = {
#ifndef ATTNBENCH_DEFAULT_TILES_ONLY  // the head_dim 256 default (last) alone: CMake's ATTNBENCH_ALL_TILES=OFF
      make_entry_ws<128, 128, 2, false>(), make_entry_ws<128, 128, 2, true>(),
      make_entry_ws<64, 64, 3, false>(),   make_entry_ws<64, 64, 3, true>(),
#endif
      make_entry_ws<256, 64, 2, false, true>(), make_entry_ws<256, 64, 2, true, true>(),  // with the variants
  };
  *count = static_cast<int>(sizeof(e) / sizeof(e[0]));
  return e;
}

}  // namespace ab::kernels::fused_detail

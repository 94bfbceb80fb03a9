// Page gather: K and V pages (contiguous [B,KVH,S,D] or the paged pool through the block table) copied into
// contiguous padded [B*KVH, pages*page_size, D] tensors (V's rows Dv wide), rows past each sequence's length
// zeroed (its block-table entries past its last page are never read); 16-byte units where aligned. One thread
// a unit of a row; with V's rows of their own width (kSplitWidths), a unit of the wider row, copying that unit of
// K's row and of V's where each has it (the instances for equal widths keep their code).
#include "primitive_device.cuh"
#include "primitives.hpp"

namespace ab::kernels {

namespace {

using namespace dev;

struct GatherParams {
  const void* k_src;
  const void* v_src;
  const std::int32_t* block_table;
  const std::int32_t* kv_lens;  // [B] or nullptr (every sequence seq_len)
  void* k_dst;
  void* v_dst;
  std::int64_t heads, group, seq_len, pages, page_size, padded_rows;  // heads: KV heads; group: copies of each
  std::int64_t row_units;  // copy units per row (of the wider of K and V)
  std::int64_t total;      // rows x row_units
  bool paged;
  std::int64_t k_units, v_units;  // kSplitWidths: copy units per row of K (D elements) and of V (Dv)
};

template <class U, bool kSplitWidths>
__global__ void gather_pages_kernel(GatherParams p) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < p.total; t += step) {
    const std::int64_t row = t / p.row_units, u = t % p.row_units;
    const std::int64_t dst_head = row / p.padded_rows, s = row % p.padded_rows;
    const std::int64_t bh = dst_head / p.group;  // the source (sequence, KV head)
    U kv = {}, vv = {};
    const std::int64_t len = p.kv_lens ? p.kv_lens[bh / p.heads] : p.seq_len;
    const bool has_k = !kSplitWidths || u < p.k_units, has_v = !kSplitWidths || u < p.v_units;
    if (s < len) {
      std::int64_t src_row;
      if (p.paged) {
        const std::int64_t b = bh / p.heads, h = bh % p.heads;
        const std::int64_t slot = p.block_table[b * p.pages + s / p.page_size];
        src_row = (slot * p.heads + h) * p.page_size + s % p.page_size;
      } else {
        src_row = bh * p.seq_len + s;
      }
      if constexpr (kSplitWidths) {
        if (has_k) kv = static_cast<const U*>(p.k_src)[src_row * p.k_units + u];
        if (has_v) vv = static_cast<const U*>(p.v_src)[src_row * p.v_units + u];
      } else {
        kv = static_cast<const U*>(p.k_src)[src_row * p.row_units + u];
        vv = static_cast<const U*>(p.v_src)[src_row * p.row_units + u];
      }
    }
    if constexpr (kSplitWidths) {
      if (has_k) static_cast<U*>(p.k_dst)[row * p.k_units + u] = kv;
      if (has_v) static_cast<U*>(p.v_dst)[row * p.v_units + u] = vv;
    } else {
      static_cast<U*>(p.k_dst)[t] = kv;
      static_cast<U*>(p.v_dst)[t] = vv;
    }
  }
}

template <class U>
int launch_typed(GatherParams p, std::int64_t k_row_bytes, std::int64_t v_row_bytes, cudaStream_t stream) {
  p.k_units = k_row_bytes / static_cast<std::int64_t>(sizeof(U));
  p.v_units = v_row_bytes / static_cast<std::int64_t>(sizeof(U));
  p.row_units = p.k_units > p.v_units ? p.k_units : p.v_units;
  p.total *= p.row_units;
  const int block = 256;
  std::int64_t blocks = (p.total + block - 1) / block;
  if (blocks > 65536) blocks = 65536;
  if (p.k_units != p.v_units) gather_pages_kernel<U, true><<<static_cast<unsigned>(blocks), block, 0, stream>>>(p);
  else gather_pages_kernel<U, false><<<static_cast<unsigned>(blocks), block, 0, stream>>>(p);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int launch_gather_pages(const GatherArgs& a, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (a.dtype != DType::fp16 && a.dtype != DType::bf16 && a.dtype != DType::fp32) return static_cast<int>(cudaErrorInvalidValue);
  if (a.paged && !a.block_table) return static_cast<int>(cudaErrorInvalidValue);
  const std::int64_t es = a.dtype == DType::fp32 ? 4 : 2;
  const std::int64_t k_row_bytes = a.head_dim * es, v_row_bytes = (a.head_dim_v > 0 ? a.head_dim_v : a.head_dim) * es;
  if (a.group < 1) return static_cast<int>(cudaErrorInvalidValue);
  GatherParams p{a.k_src, a.v_src, a.block_table, a.kv_lens, a.k_dst, a.v_dst, a.kv_heads, a.group, a.seq_len,
                 a.pages, a.page_size, a.pages * a.page_size, 0,
                 a.batch * a.kv_heads * a.group * a.pages * a.page_size, a.paged, 0, 0};
  if (p.total <= 0 || k_row_bytes <= 0 || v_row_bytes <= 0) return 0;
  const bool vec = k_row_bytes % 16 == 0 && v_row_bytes % 16 == 0 && aligned16(a.k_src) && aligned16(a.v_src) &&
                   aligned16(a.k_dst) && aligned16(a.v_dst);
  if (vec) return launch_typed<uint4>(p, k_row_bytes, v_row_bytes, s);
  if (es == 4) return launch_typed<std::uint32_t>(p, k_row_bytes, v_row_bytes, s);
  return launch_typed<std::uint16_t>(p, k_row_bytes, v_row_bytes, s);
}

}  // namespace ab::kernels

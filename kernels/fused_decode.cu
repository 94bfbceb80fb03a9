// The split-KV decode path of `fused`: which problems a decode tile takes, the split count, and the launches
// (decode kernel, then the combine when there is more than one split). Two kernels: the cp.async one
// (fused_decode.cuh, tiles "decode", "decode-sN": any page size, sm_80+) and the warp-specialized TMA one
// (fused_decode_tma.cuh, launched from fused_decode_tma.cu; tiles "decode-ws[-n128][-rows][-sN]": Hopper, page
// sizes 8, 16, 32 or multiples of 64). Each instantiated for head_dim 64 and 128 (whole-row boxes: 128 only),
// 1 or 2 m16 slices of packed query rows, fp16 and bf16; both also for head_dim 256 (Gemma 2 and 3: one slice,
// three stages, one CTA per SM; the TMA one with whole-row boxes only).
#include "fused_decode.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include <string>

#include "core/fused_decode_plan.hpp"
#include "fused_decode.cuh"
#include "fused_decode_tma_launch.hpp"
#include "kernel_occupancy.cuh"

namespace ab::kernels {

namespace {

using fused_detail::DecodeInstance;
using fused_detail::DParams;
using fused_detail::DVarParams;

template <int D, int MT, int ST, bool BF16, bool VAR>
int launch_decode(const DVarParams& dv, const FusedParams&, void* stream) {
  const fused_detail::DParamsOf<VAR>& dp = dv;  // the instance without the variants takes the base alone
  using C = fused_detail::DCfg<D, MT, ST>;
  auto kern = fused_detail::fused_decode_fwd<C, BF16, VAR>;
  if (C::SMEM > 48 * 1024) {
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM);
    if (e != cudaSuccess) return static_cast<int>(e);
  }
  const dim3 grid(static_cast<unsigned>(dp.splits), static_cast<unsigned>(dp.kv_heads * dp.chunks),
                  static_cast<unsigned>(dp.batch));
  kern<<<grid, C::THREADS, C::SMEM, static_cast<cudaStream_t>(stream)>>>(dp);
  return static_cast<int>(cudaGetLastError());
}

template <int D, int MT, int ST, bool BF16, bool VAR>
int decode_ctas_per_sm() {
  using C = fused_detail::DCfg<D, MT, ST>;
  return fused_detail::resident_ctas_per_sm(fused_detail::fused_decode_fwd<C, BF16, VAR>, C::THREADS, C::SMEM);
}

// The instance of one head_dim, stage count and slice count: fp16 or bf16, with the variants' code or without.
template <int D, int MT, int ST, bool VAR>
DecodeInstance pick_dtype(bool bf16) {
  if (bf16) return {&launch_decode<D, MT, ST, true, VAR>, &decode_ctas_per_sm<D, MT, ST, true, VAR>};
  return {&launch_decode<D, MT, ST, false, VAR>, &decode_ctas_per_sm<D, MT, ST, false, VAR>};
}
template <int D, int MT, int ST>
DecodeInstance pick_instance(bool bf16, bool var) {
  return var ? pick_dtype<D, MT, ST, true>(bf16) : pick_dtype<D, MT, ST, false>(bf16);
}

// Stages: head_dim 128 keeps 3 tiles of 64 keys in flight per CTA (two CTAs per SM), 64 keeps 4, 256 3 (one CTA
// per SM: 208 KiB of shared memory).
DecodeInstance find_cp_async(int head_dim, int mt, bool bf16, bool var) {
  if (head_dim == 256) return mt == 1 ? pick_instance<256, 1, 3>(bf16, var) : DecodeInstance{};
  if (head_dim == 128) return mt == 1 ? pick_instance<128, 1, 3>(bf16, var) : pick_instance<128, 2, 3>(bf16, var);
  if (head_dim == 64) return mt == 1 ? pick_instance<64, 1, 4>(bf16, var) : pick_instance<64, 2, 4>(bf16, var);
  return {};
}

// Whether a launch needs the instances that apply the variants (window, soft-cap, sinks, a mixed batch's counts).
bool applies_variants(const FusedParams& p) {
  return p.window > 0 || p.softcap > 0.f || p.has_sinks || p.mixed;
}

std::int64_t rows_per_kv_head(const FusedParams& p) { return (p.heads / p.kv_heads) * p.q_len; }
int slices_for(const FusedParams& p) {
  return rows_per_kv_head(p) <= 16 || fused_decode::max_rows_per_cta(p.head_dim) <= 16 ? 1 : 2;
}
std::int64_t chunks_for(const FusedParams& p) {
  const std::int64_t rows = 16 * slices_for(p);
  return (rows_per_kv_head(p) + rows - 1) / rows;
}

bool device_has_tma() {  // compute capability 9.0 and above (cp.async.bulk.tensor, mbarrier tx counts)
  static const bool has = [] {
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return major >= 9;
  }();
  return has;
}

// Page sizes whose boxes land on 1024-byte boundaries of a tile (the 128-byte swizzle's period) and tile
// a 64-key tile exactly: 8, 16, 32, or whole multiples of 64.
bool tma_page_size(std::int64_t ps) { return ps == 8 || ps == 16 || ps == 32 || (ps >= 64 && ps % 64 == 0); }

int sm_count() {
  int dev = 0, n = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    cudaGetLastError();
    return 132;
  }
  return n;
}

}  // namespace

std::string fused_decode_can_implement(const FusedParams& p, const FusedTile& tile) {
  if (!tile.decode()) return "not a decode tile";
  if (!fused_decode::takes_q_len(p.q_len))
    return "the decode kernel takes q_len <= " + std::to_string(fused_decode::kMaxQLen) + " (q_len is " +
           std::to_string(p.q_len) + ")";
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
    return "the decode kernels are instantiated for head_dim 64, 128 and 256 (not " + std::to_string(p.head_dim) + ")";
  if (tile.ws() && p.head_dim == 256 && !tile.row_boxes)
    return "tile " + tile.name() + " (TMA) is instantiated for head_dim 64 and 128; at 256 its whole-row-box variants "
           "(decode-ws-rows, decode-ws-n128-rows) and the cp.async decode tiles run";
  if (p.batch < 1 || p.heads < 1 || p.seq_len < 1 || p.kv_heads < 1 || p.heads % p.kv_heads != 0)
    return "batch, heads, kv_heads and seq_len must be positive, kv_heads dividing heads";
  if (p.seq_len > (1ll << 30)) return "seq_len above 2^30 is not supported (32-bit key indices)";
  if (tile.splits < 0) return "a negative split count";
  const std::int64_t cap = fused_decode::max_splits(fused_decode::walked_keys_bound(p.seq_len, p.q_len, p.window));
  if (tile.splits > cap)
    return std::to_string(tile.splits) + " splits is more than the " + std::to_string(cap) + " this KV length allows (" +
           std::to_string(fused_decode::kKeysPerTile) + " keys per split at least, " +
           std::to_string(fused_decode::kMaxSplits) + " at most)";
  if (p.batch > 65535 || p.kv_heads * chunks_for(p) > 65535) return "grid too large (batch or KV heads x row chunks > 65535)";
  if (p.batch * p.heads * p.q_len > 0x7fffffffll) return "batch*heads*q_len too large for the combine grid";
  if (p.paged) {
    if (p.page_size < 1) return "paged KV needs page_size >= 1";
    if (p.pages < 1 || p.pages * p.page_size < p.seq_len) return "pages * page_size must cover seq_len";
    if (p.page_size > (1ll << 30) || p.pages > (1ll << 30)) return "page geometry above 2^30";
  }
  auto misaligned = [](const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15u) != 0; };
  if (misaligned(p.q) || misaligned(p.k) || misaligned(p.v) || misaligned(p.o))
    return "Q, K, V and O must be 16-byte aligned";
  if (tile.block_n != 64 && tile.block_n != 128)
    return "tile " + tile.name() + ": decode tiles have 64 or 128 keys per tile (-n128)";
  if (!tile.ws() && (tile.block_n != 64 || tile.row_boxes))
    return "tile " + tile.name() + ": 128-key tiles and whole-row boxes are variants of the TMA decode kernel (decode-ws-n128, "
           "decode-ws-rows); the cp.async decode kernel has 64-key tiles";
  if (tile.row_boxes && p.head_dim == 64)
    return "tile " + tile.name() + " (whole-row boxes) is instantiated for head_dim 128 and 256: at head_dim 64 a row is "
           "one 128-byte box, as in decode-ws";
  if (tile.ws()) {
    if (p.paged && !tma_page_size(p.page_size))
      return "tile " + tile.name() + " (TMA) takes page sizes 8, 16, 32 and multiples of 64 (page_size is " +
             std::to_string(p.page_size) + "); the decode tiles without -ws take any";
    if (p.paged && p.pool_slots < 1) return "tile " + tile.name() + " (TMA) needs the pool's slot count";
    if (!device_has_tma())
      return "tile " + tile.name() + " (TMA) needs a compute capability 9.0+ device; the decode tiles without -ws run on 8.0+";
  }
  return {};
}

namespace {
// The compiled instance a launch of `tile` on `p` runs (empty where none is compiled).
DecodeInstance find_instance(const FusedParams& p, const FusedTile& tile) {
  const int mt = slices_for(p);
  const bool var = applies_variants(p);
  if (tile.ws())
    return fused_detail::find_decode_tma(static_cast<int>(p.head_dim), mt, p.bf16, tile.block_n, tile.row_boxes, var);
  return find_cp_async(static_cast<int>(p.head_dim), mt, p.bf16, var);
}
}  // namespace

int fused_decode_ctas_per_sm(const FusedParams& p, const FusedTile& tile) {
  if (!fused_decode_can_implement(p, tile).empty()) return 0;
  const DecodeInstance in = find_instance(p, tile);
  return in.ctas_per_sm ? in.ctas_per_sm() : 0;
}

int fused_decode_splits(const FusedParams& p, const FusedTile& tile) {
  if (tile.splits > 0) return tile.splits;
  const std::int64_t work = p.batch * p.kv_heads * chunks_for(p);
  const int resident = fused_decode_ctas_per_sm(p, tile);
  return static_cast<int>(
      fused_decode::heuristic_splits(work, fused_decode::walked_keys_bound(p.seq_len, p.q_len, p.window), sm_count(),
                                     resident > 0 ? resident : fused_decode::ctas_per_sm(p.head_dim), p.head_dim,
                                     std::min<std::int64_t>(fused_decode::max_rows_per_cta(p.head_dim), rows_per_kv_head(p)),
                                     tile.block_n));
}

int fused_decode_launch(const FusedParams& p, const FusedTile& tile, void* stream) {
  if (!fused_decode_can_implement(p, tile).empty()) return static_cast<int>(cudaErrorInvalidValue);
  if (p.paged && !p.block_table) return static_cast<int>(cudaErrorInvalidValue);
  if (p.mixed && !p.q_lens) return static_cast<int>(cudaErrorInvalidValue);
  if (p.has_sinks && !p.sinks) return static_cast<int>(cudaErrorInvalidValue);  // the instance would apply none
  const int splits = fused_decode_splits(p, tile);
  const std::int64_t need = fused_decode::partial_bytes(p.batch, p.heads, p.q_len, p.head_dim, splits);
  if (need > 0 && (!p.workspace || p.workspace_bytes < need)) return static_cast<int>(cudaErrorInvalidValue);
  const fused_detail::DecodeLaunchFn fn = find_instance(p, tile).launch;
  if (!fn) return static_cast<int>(cudaErrorInvalidValue);
  const std::int64_t rows = p.batch * p.heads * p.q_len;
  DVarParams dp{};
  dp.q = static_cast<const std::uint16_t*>(p.q);
  dp.k = static_cast<const std::uint16_t*>(p.k);
  dp.v = static_cast<const std::uint16_t*>(p.v);
  dp.o = static_cast<std::uint16_t*>(p.o);
  dp.block_table = p.paged ? p.block_table : nullptr;
  dp.kv_lens = p.kv_lens;
  dp.part_acc = need > 0 ? static_cast<float*>(p.workspace) : nullptr;
  dp.part_ml = need > 0 ? dp.part_acc + rows * splits * p.head_dim : nullptr;
  dp.batch = static_cast<int>(p.batch);
  dp.heads = static_cast<int>(p.heads);
  dp.kv_heads = static_cast<int>(p.kv_heads);
  dp.group = static_cast<int>(p.heads / p.kv_heads);
  dp.q_len = static_cast<int>(p.q_len);
  dp.seq_len = static_cast<int>(p.seq_len);
  dp.pages = p.paged ? static_cast<int>(p.pages) : 1;
  dp.page_size = p.paged ? static_cast<int>(p.page_size) : 1;
  dp.splits = splits;
  dp.keys_per_split = static_cast<int>(
      fused_decode::keys_per_split(fused_decode::walked_keys_bound(p.seq_len, p.q_len, p.window), splits));
  dp.chunks = static_cast<int>(chunks_for(p));
  dp.scale_log2 = p.scale * 1.4426950408889634f;
  dp.causal = p.causal ? 1 : 0;
  dp.paged = p.paged ? 1 : 0;
  dp.window = static_cast<int>(p.window);
  dp.cap_in = p.softcap > 0.f ? p.scale / p.softcap : 0.f;
  dp.cap_out = p.softcap > 0.f ? p.softcap / p.scale : 0.f;
  dp.sinks = p.sinks;
  dp.q_lens = p.mixed ? p.q_lens : nullptr;
  int err = fn(dp, p, stream);
  if (err != 0 || splits == 1) return err;
  auto comb = p.sinks ? (p.bf16 ? fused_detail::fused_decode_combine<true, true> : fused_detail::fused_decode_combine<false, true>)
                      : (p.bf16 ? fused_detail::fused_decode_combine<true, false> : fused_detail::fused_decode_combine<false, false>);
  comb<<<static_cast<unsigned>(rows), 64, 0, static_cast<cudaStream_t>(stream)>>>(
      dp.part_acc, dp.part_ml, dp.o, splits, static_cast<int>(p.head_dim), p.sinks, dp.heads, dp.q_len);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace ab::kernels

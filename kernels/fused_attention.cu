// Host API of the fused attention forward (kernels/fused_attention.hpp): the compiled tile list, which
// shapes each tile takes, and the launch. Three kernels: fused_kernel.cuh (mma.sync, any sm_80+ GPU),
// fused_kernel_wg.cuh (Hopper wgmma) and fused_kernel_ws.cuh (Hopper wgmma, warp-specialized with TMA;
// tiles named "...ws"; its persistent variant fused_kernel_wsp.cuh, "...wsp"). This file also instantiates the
// head_dim 64 mma.sync configurations; the others live in fused_attention_{d128,dother,wg,ws,wsp}.cu so a
// build compiles them in parallel.
#include "fused_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/fused_decode_plan.hpp"
#include "fused_decode.hpp"
#include "fused_dev_hooks.cuh"
#include "fused_kernel.cuh"

namespace ab::kernels {

namespace fused_detail {

const Entry* entries_d64(int* count) {
  static const Entry e[] = {
      make_entry<64, 128, 128, 4, 2, false>(), make_entry<64, 128, 128, 4, 2, true>(),
      make_entry<64, 128, 64, 4, 2, false>(),  make_entry<64, 128, 64, 4, 2, true>(),
      make_entry<64, 128, 64, 4, 3, false>(),  make_entry<64, 128, 64, 4, 3, true>(),
      make_entry<64, 64, 64, 4, 2, false>(),   make_entry<64, 64, 64, 4, 2, true>(),
      make_entry<64, 64, 128, 4, 2, false>(),  make_entry<64, 64, 128, 4, 2, true>(),
  };
  *count = static_cast<int>(sizeof(e) / sizeof(e[0]));
  return e;
}

namespace {

std::vector<Entry> all_entries() {
  std::vector<Entry> v;
  for (auto fn : {&entries_wg, &entries_ws, &entries_wsp, &entries_d64, &entries_d128, &entries_dother}) {
    int n = 0;
    const Entry* e = fn(&n);
    v.insert(v.end(), e, e + n);
  }
  return v;
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> v = all_entries();
  return v;
}

const Entry* find_entry(int head_dim, const FusedTile& t, bool bf16) {
  for (const Entry& e : entries())
    if (e.head_dim == head_dim && e.tile == t && e.bf16 == bf16) return &e;
  return nullptr;
}

bool tile_compiled(const FusedTile& t) {
  for (const Entry& e : entries())
    if (e.tile == t) return true;
  return false;
}

bool device_is_sm90() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return major == 9 && minor == 0;
}

int max_smem_optin() {
  int dev = 0, v = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
    cudaGetLastError();  // clear; assume Hopper's limit
    return 227 * 1024;
  }
  return v;
}

}  // namespace
}  // namespace fused_detail

// Best default first: for each head_dim the first tile in this list that is compiled for it (and that
// fused_can_implement accepts on the device) is the default. Tiles with 8+ warps are the Hopper wgmma
// kernel (2-4 warpgroups, head_dim 64, 128 and 256, compute capability 9.0 only); defaults m128n128w12s2wsp for
// head_dim 128 (session 20, H100) and m192n128w16s4wsp for 64 (session 26, H200: 1-2 % ahead of
// m192n128w16s3wsp non-causal, the default since session 21, 8 % ahead of m128n64w8s2), m128n64w12s2ws for
// 256 (session 24, H200: 2.6x m64n32w4s2), else m128n128w8s2 and m128n64w8s2 (docs/perf-notes.md). The w4
// tiles are the mma.sync kernel that also runs on sm_80+ and is the fallback: m128n128w4 for D<=64, m128n64w4
// for D=96/128, m64n32w4 for D=256. Tiles ending "ws" (5th field 1) are the warp-specialized Hopper kernel
// (fused_kernel_ws.cuh: a TMA producer warpgroup and two consumer warpgroups); "wsp" (5th field 2) their
// persistent variant (fused_kernel_wsp.cuh: one CTA per SM walking work items, causal blocks in pairs), the
// two defaults above first, the others after the older kernels' tiles (the 5th field: the tile's family). The decode tiles come first
// (decode-ws, decode), their fixed split counts and the TMA decode variants (-n128, -rows) last.
std::vector<FusedTile> fused_compiled_tiles() {
  static const int order[][5] = {
      {128, 128, 12, 2, 2}, {192, 128, 16, 4, 2}, {192, 128, 16, 3, 2}, {128, 128, 12, 2, 1}, {128, 128, 8, 2, 0},
      {128, 64, 8, 2, 0},   {192, 64, 12, 2, 0},  {256, 64, 16, 2, 0},  {128, 64, 12, 3, 1},  {128, 64, 12, 3, 2},
      {192, 64, 16, 3, 2},  {192, 128, 16, 2, 2}, {128, 128, 12, 3, 2}, {128, 160, 12, 2, 2},  {192, 64, 16, 5, 2},
      {128, 64, 12, 2, 1},
      {128, 128, 4, 2, 0},  {128, 64, 4, 2, 0},  {64, 32, 4, 2, 0},   {128, 64, 4, 3, 0},
      {64, 64, 4, 2, 0},    {128, 32, 4, 2, 0},  {64, 128, 4, 2, 0},
  };
  std::vector<FusedTile> out;
  // The TMA decode kernel where it applies (Hopper): 128-key tiles of whole-row boxes at head_dim 128 (the
  // fastest on an H100 at Llama-3.1-8B decode, docs/perf-notes.md), else 64-key tiles; then the cp.async one.
  out.push_back(FusedTile::decode_tile(0, true, 128, true));
  out.push_back(FusedTile::decode_tile(0, true));
  out.push_back(FusedTile::decode_tile(0));
  constexpr TileFamily kFamily[] = {TileFamily::prefill, TileFamily::prefill_ws, TileFamily::prefill_wsp};
  for (const auto& o : order) {
    const FusedTile t = FusedTile::prefill_tile(o[0], o[1], o[2], o[3], kFamily[o[4]]);
    if (fused_detail::tile_compiled(t)) out.push_back(t);
  }
  for (int s : fused_decode::kSearchSplits) out.push_back(FusedTile::decode_tile(s));
  for (int s : fused_decode::kSearchSplits) out.push_back(FusedTile::decode_tile(s, true));
  // The TMA decode kernel's other shapes (fused_decode_tma.cuh), searched by tune: 128-key tiles and
  // whole-row boxes (head_dim 128) alone, and the default's fixed split counts.
  for (const auto& [block_n, rows] : {std::pair{128, false}, std::pair{64, true}}) {
    out.push_back(FusedTile::decode_tile(0, true, block_n, rows));
    for (int s : fused_decode::kSearchSplits) out.push_back(FusedTile::decode_tile(s, true, block_n, rows));
  }
  for (int s : fused_decode::kSearchSplits) out.push_back(FusedTile::decode_tile(s, true, 128, true));
  return out;
}

std::string fused_can_implement(const FusedParams& p, const FusedTile& tile) {
  using namespace fused_detail;
  if (tile.decode()) return fused_decode_can_implement(p, tile);
  const std::string name = tile.name();
  if (!tile_compiled(tile)) return "tile " + name + " is not compiled";
  const Entry* e = find_entry(static_cast<int>(p.head_dim), tile, p.bf16);
  // Only the tiles with the variants' instances (Entry::variants: the wsp tiles, the ws tile of head_dim 256, the
  // mma.sync tiles of fused_attention_dother.cu's head dims) apply them; the others would drop them.
  // The problem's sinks (has_sinks), not their pointer: the strategy asks before its inputs exist.
  if (e && !e->variants && (p.window > 0 || p.softcap > 0.f || p.has_sinks || p.sinks))
    return "tile " + name + " does not apply a sliding window, a soft-cap or sinks at head_dim " +
           std::to_string(p.head_dim) +
           " (the decode tiles, the ...wsp tiles, the ...ws tile of head_dim 256 and the mma.sync tiles of head_dim 32, "
           "96 and 256 do)";
  if (!e) {
    std::vector<int> ds;
    for (const Entry& x : entries())
      if (x.tile == tile && !x.bf16) ds.push_back(x.head_dim);
    std::sort(ds.begin(), ds.end());
    std::string dims;
    for (int d : ds) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    return "tile " + name + " is not instantiated for head_dim " + std::to_string(p.head_dim) +
           " (it has head_dim " + dims + ")";
  }
  if (p.batch < 1 || p.heads < 1 || p.seq_len < 1) return "batch, heads and seq_len must be positive";
  if (p.kv_heads < 1 || p.heads % p.kv_heads != 0) return "kv_heads must divide heads";
  if (p.q_len < 1 || p.q_len > p.seq_len) return "q_len must be between 1 and seq_len";
  if (p.mixed && !(tile.persistent() && e && e->variants))
    return "tile " + name + ": only the persistent prefill tiles (...wsp) and the decode tiles take per-sequence query "
           "counts (--q_lens)";
  // Every tile takes grouped KV heads, q_len != seq_len (bottom-right causal), ragged lengths and paged
  // K/V of any page size (the ws tiles load pages by TMA where a page is a multiple of 8 rows nesting with
  // the tile, by cp.async otherwise: fused_kernel_ws.cuh).
  if (p.seq_len > (1ll << 30)) return "seq_len above 2^30 is not supported (32-bit row indices)";
  const long long m_blocks = (p.q_len + tile.block_m - 1) / tile.block_m;
  if (m_blocks * p.batch * p.heads > 0x7fffffffll) return "grid too large (query blocks x batch x heads > 2^31-1)";
  if (p.batch * p.heads > 0x7fffffffll) return "batch*heads too large";
  if (p.paged) {
    if (p.page_size < 1) return "paged KV needs page_size >= 1";
    if (p.pages < 1 || p.pages * p.page_size < p.seq_len) return "pages * page_size must cover seq_len";
    if (p.page_size > (1ll << 30) || p.pages > (1ll << 30)) return "page geometry above 2^30";
  }
  if (e->tile.wgmma() && !device_is_sm90())
    return "tile " + name + " uses Hopper wgmma (built for sm_90a) and needs a compute capability 9.0 device";
  if (e->smem_bytes > max_smem_optin())
    return "tile " + name + " needs " + std::to_string(e->smem_bytes) + " bytes of shared memory, device allows " +
           std::to_string(max_smem_optin());
  auto misaligned = [](const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15u) != 0; };
  if (misaligned(p.q) || misaligned(p.k) || misaligned(p.v) || misaligned(p.o))
    return "Q, K, V and O must be 16-byte aligned";
  return {};
}

int fused_launch(const FusedParams& p, const FusedTile& tile, void* stream) {
  using namespace fused_detail;
  if (tile.decode()) return fused_decode_launch(p, tile, stream);
  if (!fused_can_implement(p, tile).empty()) return static_cast<int>(cudaErrorInvalidValue);
  if (p.paged && !p.block_table) return static_cast<int>(cudaErrorInvalidValue);
  if (p.mixed && !p.q_lens) return static_cast<int>(cudaErrorInvalidValue);  // the non-VAR kernel would ignore them
  if (p.has_sinks && !p.sinks) return static_cast<int>(cudaErrorInvalidValue);  // the instance would apply none
  const Entry* e = find_entry(static_cast<int>(p.head_dim), tile, p.bf16);
  KVarParams kp{};
  kp.q = static_cast<const std::uint16_t*>(p.q);
  kp.k = static_cast<const std::uint16_t*>(p.k);
  kp.v = static_cast<const std::uint16_t*>(p.v);
  kp.o = static_cast<std::uint16_t*>(p.o);
  kp.block_table = p.paged ? p.block_table : nullptr;
  kp.kv_lens = p.kv_lens;
  kp.batch = static_cast<int>(p.batch);
  kp.heads = static_cast<int>(p.heads);
  kp.kv_heads = static_cast<int>(p.kv_heads);
  kp.group = static_cast<int>(p.heads / p.kv_heads);
  kp.q_len = static_cast<int>(p.q_len);
  kp.seq_len = static_cast<int>(p.seq_len);
  kp.pages = p.paged ? static_cast<int>(p.pages) : 1;
  kp.page_size = p.paged ? static_cast<int>(p.page_size) : 1;
  kp.m_blocks = static_cast<int>((p.q_len + tile.block_m - 1) / tile.block_m);
  kp.scale_log2 = p.scale * 1.4426950408889634f;
  kp.causal = p.causal ? 1 : 0;
  kp.paged = p.paged ? 1 : 0;
  kp.pool_slots = !p.paged ? 0 : (p.pool_slots > 0 ? p.pool_slots : p.batch * p.pages);
  kp.tail_ws = tile.persistent() ? static_cast<float*>(p.workspace) : nullptr;  // the tail split's, if room
  kp.tail_ws_bytes = tile.persistent() && p.workspace ? p.workspace_bytes : 0;
  kp.window = static_cast<int>(p.window);  // fused_params clamped it below seq_len
  kp.cap_in = p.softcap > 0.f ? p.scale / p.softcap : 0.f;
  kp.cap_out = p.softcap > 0.f ? p.softcap / p.scale : 0.f;
  kp.sinks = p.sinks;
  kp.q_lens = p.mixed ? p.q_lens : nullptr;
  return e->launch(kp, stream);
}

int fused_kernel_count(const FusedParams& p, const FusedTile& tile) {
  return tile.decode() && fused_decode_splits(p, tile) > 1 ? 2 : 1;
}

int fused_decode_occupancy(const FusedParams& p, const FusedTile& tile) {
  return tile.decode() ? fused_decode_ctas_per_sm(p, tile) : 0;
}

std::vector<FusedKernelInfo> fused_kernel_infos() {
  std::vector<FusedKernelInfo> out;
  for (const auto& e : fused_detail::entries()) {
    FusedKernelInfo i;
    i.head_dim = e.head_dim;
    i.tile = e.tile;
    i.bf16 = e.bf16;
    i.smem_bytes = e.smem_bytes;
    i.q_in_regs = e.q_in_regs;
    i.tail_split = e.tail_split;
    cudaFuncAttributes a{};
    if (e.attrs(&a) == 0) {
      i.regs = a.numRegs;
      i.local_bytes = static_cast<int>(a.localSizeBytes);
    } else {
      cudaGetLastError();
    }
    out.push_back(i);
  }
  return out;
}

}  // namespace ab::kernels

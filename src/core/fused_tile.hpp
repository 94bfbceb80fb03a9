// A fused-kernel tile's one identity: which kernel family runs it, its geometry, and its one name (what
// --tile takes, the cache and reports store, `attnbench list` shows), with the name's parse and the tile's
// JSON beside it. The kernel table (kernels/fused_kernel.cuh's Entry), the heuristic cache, the report rows
// and `list` all hold this type; nothing else spells a tile.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ab {

// Which fused kernel a tile is. prefill: the FlashAttention-2 class kernel, mma.sync with 4 warps (any
// sm_80+ GPU) or Hopper wgmma with 8 or more ("m64n64w4s2", "m128n64w8s2"); prefill_ws: its warp-specialized
// Hopper variant, a TMA producer warpgroup ("...ws"); prefill_wsp: that one's persistent variant, one CTA per
// SM walking work items ("...wsp"); decode: the split-KV decode kernel for q_len <= 16 ("decode", "decode-s8");
// decode_ws: its warp-specialized TMA Hopper variant ("decode-ws", "decode-ws-n128-rows-s4").
enum class TileFamily { prefill, prefill_ws, prefill_wsp, decode, decode_ws };

// "prefill", "prefill-ws", "prefill-wsp", "decode", "decode-ws".
const char* tile_family_name(TileFamily f);

struct FusedTile {
  int block_m = 64, block_n = 64, warps = 4, stages = 2;
  TileFamily family = TileFamily::prefill;
  // Decode families: KV splits per (sequence, KV head); 0 = the heuristic's count (core/fused_decode_plan.hpp).
  int splits = 0;
  // decode_ws: one TMA copy per box of whole rows ("-rows") instead of one per 64-column block. Its block_n
  // is 64 keys per tile, or 128 ("-n128": K and V in separate ring slots of `stages` slots).
  bool row_boxes = false;

  bool decode() const { return family == TileFamily::decode || family == TileFamily::decode_ws; }
  // Warp-specialized with a TMA producer: prefill_ws, prefill_wsp, decode_ws.
  bool ws() const { return family == TileFamily::prefill_ws || family == TileFamily::prefill_wsp || family == TileFamily::decode_ws; }
  bool persistent() const { return family == TileFamily::prefill_wsp; }
  // A Hopper wgmma prefill kernel (built for sm_90a): the ws families and the 2-4 warpgroup (8+ warp) tiles.
  bool wgmma() const { return !decode() && (ws() || warps >= 8); }

  // A prefill tile of `family` (prefill, prefill_ws or prefill_wsp).
  static constexpr FusedTile prefill_tile(int block_m, int block_n, int warps, int stages,
                                          TileFamily family = TileFamily::prefill) {
    return FusedTile{block_m, block_n, warps, stages, family, 0, false};
  }
  // A decode tile: its block fields are fixed (16 query rows, 4 warps, 3 stages); `ws` the TMA variant.
  static constexpr FusedTile decode_tile(int splits, bool ws = false, int block_n = 64, bool row_boxes = false) {
    return FusedTile{16, block_n, 4, 3, ws ? TileFamily::decode_ws : TileFamily::decode, splits, row_boxes};
  }

  // "m64n64w4s2", "m128n128w12s2ws", "m128n128w12s2wsp", "decode", "decode-s8", "decode-ws-s8",
  // "decode-ws-n128-rows-s4": the decode suffixes in the order -ws, -n<keys>, -rows, -s<splits>.
  std::string name() const;
  // The tile `name` names (one spelling per tile: name() gives it back), or nullopt when it names none.
  static std::optional<FusedTile> from_name(const std::string& name);

  // {"block_m", "block_n", "warps", "stages", "name"}, plus "ws", "persistent", "row_boxes" when true and
  // "decode" and "splits" for a decode tile (the fields every earlier version wrote and reads).
  nlohmann::json to_json() const;
  // Reads to_json's object, and every earlier version's (fields it leaves out are false / 0). On a missing,
  // mistyped or out-of-range field calls `fail(field, what)` ("block_m", "must be an integer"), which must
  // throw: each reader words its own errors.
  using FieldFailure = std::function<void(const std::string& field, const std::string& what)>;
  static FusedTile from_json(const nlohmann::json& j, const FieldFailure& fail);

  bool operator==(const FusedTile& o) const {
    return family == o.family && block_m == o.block_m && block_n == o.block_n && warps == o.warps &&
           stages == o.stages && splits == o.splits && row_boxes == o.row_boxes;
  }
  bool operator!=(const FusedTile& o) const { return !(*this == o); }
};

}  // namespace ab

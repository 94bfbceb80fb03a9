// Which compiled tiles one harness process runs (FUSED_DEV_FAMILY): "wg" the Hopper wgmma tiles, "mma" the
// mma.sync ones, "all" both; a fault in one kernel family then leaves the other's results standing. "wsp"
// the persistent ws tiles only (a subset of "wg": a device script checking just them).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/backend.hpp"

namespace ab::fused_dev {

enum class TileFamily { all, wg, mma, wsp };

std::optional<TileFamily> parse_tile_family(const std::string& s);
const char* tile_family_name(TileFamily f);
// The wgmma tiles are the 2-, 3- and 4-warpgroup ones (8 warps or more).
bool is_wgmma_tile(const FusedTile& t);
// `tiles` of the family, in their order.
std::vector<FusedTile> tiles_of_family(const std::vector<FusedTile>& tiles, TileFamily f);

}  // namespace ab::fused_dev

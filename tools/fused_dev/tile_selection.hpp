// Which compiled tiles one harness process runs (FUSED_DEV_FAMILY): "wg" the Hopper wgmma tiles, "mma" the
// mma.sync ones, "all" both; a fault in one kernel then leaves the other's results standing. "wsp" the
// persistent ws tiles only (a subset of "wg": a device script checking just them). A selection of tiles, not
// a tile's own family (FusedTile::family, core/fused_tile.hpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/backend.hpp"

namespace ab::fused_dev {

enum class TileSelection { all, wg, mma, wsp };

std::optional<TileSelection> parse_tile_selection(const std::string& s);
const char* tile_selection_name(TileSelection f);
// `tiles` in the selection, in their order (wg: FusedTile::wgmma(), the 2-, 3- and 4-warpgroup tiles).
std::vector<FusedTile> tiles_of_selection(const std::vector<FusedTile>& tiles, TileSelection f);

}  // namespace ab::fused_dev

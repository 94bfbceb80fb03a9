// The harness's tile selections (tile_selection.hpp).
#include "tile_selection.hpp"

namespace ab::fused_dev {

std::optional<TileSelection> parse_tile_selection(const std::string& s) {
  if (s == "all") return TileSelection::all;
  if (s == "wg") return TileSelection::wg;
  if (s == "mma") return TileSelection::mma;
  if (s == "wsp") return TileSelection::wsp;
  return std::nullopt;
}

const char* tile_selection_name(TileSelection f) {
  switch (f) {
    case TileSelection::wg: return "wg";
    case TileSelection::mma: return "mma";
    case TileSelection::wsp: return "wsp";
    case TileSelection::all: break;
  }
  return "all";
}

std::vector<FusedTile> tiles_of_selection(const std::vector<FusedTile>& tiles, TileSelection f) {
  std::vector<FusedTile> out;
  for (const FusedTile& t : tiles)
    if (f == TileSelection::wsp ? t.persistent() : f == TileSelection::all || (f == TileSelection::wg) == t.wgmma())
      out.push_back(t);
  return out;
}

}  // namespace ab::fused_dev

// Tile families of the fused kernels.
#include "tile_family.hpp"

namespace ab::fused_dev {

std::optional<TileFamily> parse_tile_family(const std::string& s) {
  if (s == "all") return TileFamily::all;
  if (s == "wg") return TileFamily::wg;
  if (s == "mma") return TileFamily::mma;
  if (s == "wsp") return TileFamily::wsp;
  return std::nullopt;
}

const char* tile_family_name(TileFamily f) {
  switch (f) {
    case TileFamily::wg: return "wg";
    case TileFamily::mma: return "mma";
    case TileFamily::wsp: return "wsp";
    case TileFamily::all: break;
  }
  return "all";
}

bool is_wgmma_tile(const FusedTile& t) { return t.wgmma(); }

std::vector<FusedTile> tiles_of_family(const std::vector<FusedTile>& tiles, TileFamily f) {
  std::vector<FusedTile> out;
  for (const FusedTile& t : tiles)
    if (f == TileFamily::wsp ? t.persistent() : f == TileFamily::all || (f == TileFamily::wg) == is_wgmma_tile(t))
      out.push_back(t);
  return out;
}

}  // namespace ab::fused_dev

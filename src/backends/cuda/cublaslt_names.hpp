// Readable names for cuBLASLt configuration ids ("128x64" for a tile id), "auto" for 0, "#id" if unknown.
#pragma once
#include <string>

namespace ab::cuda {

std::string tile_name(int id);
std::string stages_name(int id);
std::string cluster_shape_name(int id);
std::string inner_shape_name(int id);

}  // namespace ab::cuda

// Host API of the split-KV decode kernel (kernels/fused_decode.cu), reached through the fused API
// (kernels/fused_attention.hpp) for decode tiles. No CUDA headers.
#pragma once
#include <string>

#include "fused_attention.hpp"

namespace ab::kernels {

// Empty when the decode tile `tile` can run `p`, else why not.
std::string fused_decode_can_implement(const FusedParams& p, const FusedTile& tile);
// The resident CTAs per SM of the decode instance `tile` runs on `p` (the runtime's occupancy of that compiled
// kernel); 0 where the tile cannot run `p` or the runtime cannot say.
int fused_decode_ctas_per_sm(const FusedParams& p, const FusedTile& tile);
// The split count a launch of `tile` on `p` uses (tile.splits, or the heuristic on this device's SMs taking
// every sequence as seq_len long: FusedParams has no host lengths, so the strategy resolves the count from
// each sequence's own length in setup and launches with it).
int fused_decode_splits(const FusedParams& p, const FusedTile& tile);
// The decode kernel and, with more than one split, the combine. Returns the first cudaError_t.
int fused_decode_launch(const FusedParams& p, const FusedTile& tile, void* stream);

}  // namespace ab::kernels

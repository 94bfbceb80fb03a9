// A problem's random inputs: which stream and placement each tensor draws (core/input_stream.hpp; one
// definition for every backend, whose DeviceMemory::fill_random draws them where they live), the random page
// placement and sink logits, and host copies for the tests, the tools and the CPU reference.
#pragma once
#include <cstdint>
#include <vector>

#include "core/input_stream.hpp"
#include "core/problem.hpp"

namespace ab {

// Host copies of a problem's tensors (raw dtype bits), in the layouts described in backend.hpp.
struct HostTensors {
  std::vector<std::uint16_t> q, k, v;     // q: [B,H,q_len,D]; k: contiguous [B,KVH,S,D] or pool [slots][KVH][ps][D];
                                          // v: the same with Dv (head_dim_v) for D
  std::vector<std::int32_t> block_table;  // [B, P], paged only; -1 past a sequence's last page
  std::vector<float> sinks;               // [H] sink logits in [-1, 5) when the problem has sinks, else empty
};

// Tensor `which` (q, k or v) of `p`: Q flat [B,H,q_len,D]; K and V as [B,KVH,S] rows of D (Dv) elements,
// placed through `block_table` and `kv_lens` ([B], paged only; in the memory of whoever draws).
RandomFill input_fill(const Problem& p, InputTensor which, std::uint64_t seed, const std::int32_t* block_table,
                      const std::int32_t* kv_lens);

// The paged layout's placement [B, P]: a shuffled pool slot for each page, -1 past a sequence's last page;
// empty for the contiguous layout.
std::vector<std::int32_t> random_block_table(const Problem& p, std::uint64_t seed);
// [B] the sequences' KV lengths, and their query counts (Problem::q_len_of).
std::vector<std::int32_t> kv_lens_of(const Problem& p);
std::vector<std::int32_t> q_lens_of(const Problem& p);
// [H] sink logits in [-1, 5) when the problem has sinks, else empty.
std::vector<float> random_sinks(const Problem& p, std::uint64_t seed);

// Draws `f` into host memory (16-bit elements) on the host's cores; elements the placement puts nowhere
// are left as they were.
void draw_random_host(std::uint16_t* dst, const RandomFill& f);

// Random inputs in [-1, 1) (never zeros), a random page placement for the paged layout, zeros in the
// unused rows of the pool, and with sinks one logit a head in [-1, 5). A paged problem holds the same Q, K
// and V values as the contiguous one of the same seed, and the sinks change no other tensor. Contiguous K/V
// rows past a ragged sequence's length hold random values too: a strategy that reads them must mask them.
HostTensors make_random_inputs(const Problem& p, std::uint64_t seed);

}  // namespace ab

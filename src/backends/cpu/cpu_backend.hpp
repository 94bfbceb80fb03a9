// The CPU reference backend: every primitive in plain C++ with fp64 accumulation, counting the primitive
// calls it receives. Always built; the oracle for tests and the backend for machines without a GPU.
#pragma once
#include <memory>

#include "core/backend.hpp"

namespace ab {

std::unique_ptr<Backend> make_cpu_backend();

// The CPU fused strategy's tiled online-softmax algorithm (the GPU kernel's loop structure), exposed for tests.
void cpu_fused_attention(const Problem& p, const AttentionIO& io, int block_m, int block_n);

}  // namespace ab

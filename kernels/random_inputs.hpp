// Host launcher of the random-input draw (core/input_stream.hpp): a tensor of the inputs drawn in device
// memory, the same bits as the host draw. No CUDA headers: the stream is a cudaStream_t passed as void*;
// returns the cudaError_t of the launch (cudaGetLastError right after it; 0 and nothing launched for an empty
// tensor).
#pragma once
#include "core/input_stream.hpp"

namespace ab::kernels {

int launch_random_fill(void* dst, const RandomFill& fill, void* stream);

}  // namespace ab::kernels

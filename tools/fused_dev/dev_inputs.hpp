// Host inputs of a harness problem: the project's random inputs (core/reference.hpp), Q spread wider so
// that softmax rows are neither flat nor one-hot, and NaN in the K/V rows past each sequence's length
// (the pool rows of its last page; contiguous rows of a ragged sequence), which no output may depend on.
#pragma once
#include <cstdint>

#include "core/problem.hpp"
#include "core/random_inputs.hpp"
#include "core/reference.hpp"

namespace ab::fused_dev {

// Q is multiplied by this (and rounded to the dtype again): with K in [-1, 1), the scaled scores
// Q K^T / sqrt(D) then have a standard deviation of about 1.5.
inline constexpr double kQuerySpread = 4.5;

// The K/V rows past a sequence's length get these bits: NaN in both fp16 and bf16.
inline constexpr std::uint16_t kNanBits = 0xffff;

HostTensors make_dev_inputs(const Problem& p, std::uint64_t seed);

}  // namespace ab::fused_dev

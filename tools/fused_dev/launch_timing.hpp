// Timing of one kernel launch the way the harness and peer_sdpa.py time it: warm-up launches, then per
// sample an L2 flush (a 512 MB memset, outside the timed region) and one launch between two CUDA events; or
// several launches' samples interleaved.
#pragma once
#include <functional>
#include <vector>

#include "backends/cuda/l2_flush.hpp"
#include "sample_summary.hpp"

namespace ab::fused_dev {

// peer_sdpa.py flushes with a 512 MB fill as well.
inline constexpr long long kFlushBytes = 512ll << 20;

// `flusher` must be initialized (init(kFlushBytes / 2)). Throws BackendError on device failures.
SampleSummary time_launch(const std::function<void()>& launch, cuda::L2Flusher& flusher, int warmup, int samples);

// The same for several launches in turn: sample i of every launch (in an order that rotates) before sample
// i + 1 of any, so that all of them see the same clocks. An H200 slows by up to 10 % within a few seconds of
// back-to-back work (power), so a series timed after another one reads slower than the same kernel timed
// first (session 32).
std::vector<SampleSummary> time_launches_interleaved(const std::vector<std::function<void()>>& launches,
                                                     cuda::L2Flusher& flusher, int warmup, int samples);

}  // namespace ab::fused_dev

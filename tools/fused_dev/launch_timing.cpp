// Event timing of one launch per sample, L2 flushed before each, with the project's event timer (one launch's
// series, or several launches' series interleaved sample by sample).
#include "launch_timing.hpp"

#include <cuda_runtime.h>

#include <vector>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_timer.hpp"

namespace ab::fused_dev {

SampleSummary time_launch(const std::function<void()>& launch, cuda::L2Flusher& flusher, int warmup, int samples) {
  return time_launches_interleaved({launch}, flusher, warmup, samples).front();
}

std::vector<SampleSummary> time_launches_interleaved(const std::vector<std::function<void()>>& launches,
                                                     cuda::L2Flusher& flusher, int warmup, int samples) {
  constexpr void* stream = nullptr;
  const auto timer = cuda::make_event_timer(stream);
  for (const auto& launch : launches)
    for (int i = 0; i < warmup; ++i) launch();
  AB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::vector<double>> ms(launches.size());
  for (auto& m : ms) m.reserve(static_cast<std::size_t>(samples));
  const std::size_t n = launches.size();
  for (int i = 0; i < samples; ++i)
    for (std::size_t r = 0; r < n; ++r) {  // the order rotates from sample to sample
      const std::size_t k = (r + static_cast<std::size_t>(i)) % n;
      flusher.flush(stream);
      timer->start();
      launches[k]();
      timer->stop();
      ms[k].push_back(timer->elapsed_ms());
    }
  std::vector<SampleSummary> out;
  out.reserve(ms.size());
  for (const auto& m : ms) out.push_back(summarize_samples(m));
  return out;
}

}  // namespace ab::fused_dev

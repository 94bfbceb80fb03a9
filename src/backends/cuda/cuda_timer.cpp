// CUDA-event timer: start/stop record events on the stream, elapsed_ms waits for the stop event.
#include "backends/cuda/cuda_timer.hpp"

#include <cuda_runtime.h>

#include "backends/cuda/cuda_check.hpp"

namespace ab::cuda {

namespace {

class EventTimer : public DeviceTimer {
 public:
  explicit EventTimer(cudaStream_t s) : stream_(s) {
    AB_CUDA_CHECK(cudaEventCreate(&start_));
    cudaError_t e = cudaEventCreate(&stop_);
    if (e != cudaSuccess) {
      cudaEventDestroy(start_);
      throw_cuda_error(e, "cudaEventCreate(&stop_)");
    }
  }
  ~EventTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start() override { AB_CUDA_CHECK(cudaEventRecord(start_, stream_)); }
  void stop() override { AB_CUDA_CHECK(cudaEventRecord(stop_, stream_)); }
  double elapsed_ms() override {
    AB_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    AB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace

std::unique_ptr<DeviceTimer> make_event_timer(void* stream) {
  return std::make_unique<EventTimer>(static_cast<cudaStream_t>(stream));
}

}  // namespace ab::cuda

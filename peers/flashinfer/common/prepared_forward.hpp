// One planned FlashInfer forward: setup builds it (plan, workspace, parameters), forward only launches it.
#pragma once
#include <cuda_runtime_api.h>

namespace abfi {

class PreparedForward {
 public:
  virtual ~PreparedForward() = default;
  // Enqueues FlashInfer's kernels for one forward on the stream given at setup: no allocation, no
  // synchronization (it may be captured into a CUDA graph). The CUDA status of the launches; FlashInfer may
  // also throw (flashinfer::Error) on a dispatch it cannot serve.
  virtual cudaError_t launch() = 0;
};

}  // namespace abfi

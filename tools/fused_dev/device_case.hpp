// One harness problem on the device: Q, K/V (contiguous or the paged pool), the block table and O in
// device memory (freed on destruction), and the FusedParams of a launch on them. No CUDA headers.
#pragma once
#include <cstdint>
#include <vector>

#include "backends/cuda/cuda_memory.hpp"
#include "core/problem.hpp"
#include "core/random_inputs.hpp"
#include "core/reference.hpp"
#include "fused_attention.hpp"

namespace ab::fused_dev {

class DeviceCase {
 public:
  // Allocates and uploads; throws BackendError on device failures (nothing is left allocated then).
  DeviceCase(const Problem& p, const HostTensors& t);
  ~DeviceCase();
  DeviceCase(const DeviceCase&) = delete;
  DeviceCase& operator=(const DeviceCase&) = delete;

  const kernels::FusedParams& params() const { return params_; }
  // One launch of `tile` on the default stream; throws BackendError on a launch error (bench and soak).
  void launch(const FusedTile& tile) const;
  // Fills O with 0xff bytes (NaN in fp16 and bf16), so that an element a launch leaves unwritten shows.
  void poison_output();
  // O's raw dtype bits, [B,H,S,D]; waits for the default stream.
  std::vector<std::uint16_t> download_output() const;

 private:
  void release() noexcept;
  cuda::AllocationTracker mem_;
  std::int64_t o_elements_ = 0;
  void *q_ = nullptr, *k_ = nullptr, *v_ = nullptr, *o_ = nullptr, *block_table_ = nullptr, *kv_lens_ = nullptr,
       *workspace_ = nullptr;
  std::int64_t workspace_bytes_ = 0;
  kernels::FusedParams params_;
};

}  // namespace ab::fused_dev

// The block table and kv_lens on the host, where FlashInfer plans: attnbench's host copies, or (when it hands
// none) copies read back from the device tensors. Setup time only; throws CudaFailure.
#pragma once
#include <attnbench/plugin.h>

#include <cstdint>
#include <vector>

namespace abfi {

struct HostInputs {
  std::vector<int32_t> block_table;  // [B * pages]; empty for contiguous K/V
  std::vector<int32_t> kv_lens;      // [B]
};

HostInputs read_host_inputs(const ab_problem& p, const ab_tensors& t);

}  // namespace abfi

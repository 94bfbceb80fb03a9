// What a FlashInfer peer row holds between setup and teardown, and the plugin entry points every peer shares:
// forward (launch what setup prepared, check the launch) and teardown (free it all).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/device_allocations.hpp"
#include "common/page_table.hpp"
#include "common/prepared_forward.hpp"

namespace abfi {

struct PeerState {
  const char* what = "";          // the FlashInfer operation, for messages ("FlashInfer's batch decode")
  DeviceAllocations mem;          // destroyed last: everything below points into it
  PageTable pages;
  std::vector<int32_t> q_indptr;  // host copy of the query indptr (prefill)
  std::unique_ptr<PreparedForward> forward;
};

// The ABI's forward: one launch of state->forward on the stream given at setup, its CUDA status and
// cudaGetLastError checked; a FlashInfer exception becomes the message.
int peer_forward(void* state, char* err, std::size_t err_size);
// The ABI's teardown.
void peer_teardown(void* state);

}  // namespace abfi

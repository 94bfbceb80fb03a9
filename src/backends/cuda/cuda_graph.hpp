// Capturing a forward into a CUDA graph and replaying it on the backend's stream.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "core/backend.hpp"

namespace ab::cuda {

// Stream-captures `forward` on `stream` (cudaStream_t, thread-local capture mode) and instantiates the
// graph. Returns nullptr, with the CUDA error state cleared and `why` set, when capture fails; never
// throws, except that a sticky device error from `forward` is rethrown.
std::unique_ptr<CapturedForward> capture_graph(void* stream, const std::function<void()>& forward, std::string* why);

}  // namespace ab::cuda

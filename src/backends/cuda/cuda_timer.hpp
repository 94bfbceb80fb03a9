// DeviceTimer on CUDA events recorded on the backend's stream.
#pragma once
#include <memory>

#include "core/backend.hpp"

namespace ab::cuda {

// `stream` is the cudaStream_t the events are recorded on. Throws BackendError if events cannot be made.
std::unique_ptr<DeviceTimer> make_event_timer(void* stream);

}  // namespace ab::cuda

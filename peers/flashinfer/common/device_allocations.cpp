// DeviceAllocations: cudaMalloc / cudaMallocHost at setup, every pointer freed by the destructor.
#include "common/device_allocations.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "common/message.hpp"

namespace abfi {

DeviceAllocations::~DeviceAllocations() {
  for (void* p : device_) cudaFree(p);
  for (void* p : pinned_) cudaFreeHost(p);
}

void* DeviceAllocations::device(std::size_t bytes, const char* what) {
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, std::max<std::size_t>(bytes, 16)), what);
  device_.push_back(p);
  return p;
}

void* DeviceAllocations::pinned(std::size_t bytes, const char* what) {
  void* p = nullptr;
  check_cuda(cudaMallocHost(&p, std::max<std::size_t>(bytes, 16)), what);
  pinned_.push_back(p);
  return p;
}

int32_t* DeviceAllocations::upload(const std::vector<int32_t>& values, const char* what) {
  auto* p = static_cast<int32_t*>(device(values.size() * sizeof(int32_t), what));
  if (!values.empty())
    check_cuda(cudaMemcpy(p, values.data(), values.size() * sizeof(int32_t), cudaMemcpyHostToDevice), what);
  return p;
}

}  // namespace abfi

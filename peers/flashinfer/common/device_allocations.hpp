// The device and page-locked host memory one peer row allocates in setup (page tables, FlashInfer's float and
// int workspaces, the int workspace's pinned staging copy), freed together when the row's state goes away.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace abfi {

class DeviceAllocations {
 public:
  DeviceAllocations() = default;
  DeviceAllocations(const DeviceAllocations&) = delete;
  DeviceAllocations& operator=(const DeviceAllocations&) = delete;
  ~DeviceAllocations();

  // bytes of device memory (at least 16, 256-byte aligned); throws CudaFailure.
  void* device(std::size_t bytes, const char* what);
  // bytes of page-locked host memory (at least 16); throws CudaFailure.
  void* pinned(std::size_t bytes, const char* what);
  // A device copy of `values` (synchronous: setup time only); throws CudaFailure.
  int32_t* upload(const std::vector<int32_t>& values, const char* what);

 private:
  std::vector<void*> device_;
  std::vector<void*> pinned_;
};

}  // namespace abfi

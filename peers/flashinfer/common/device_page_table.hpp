// A PageTable's arrays in device memory, where FlashInfer's kernels read them (uploaded once, in setup).
#pragma once
#include "common/device_allocations.hpp"
#include "common/page_table.hpp"

namespace abfi {

struct DevicePageTable {
  int32_t* indptr = nullptr;
  int32_t* indices = nullptr;
  int32_t* last_page_len = nullptr;
};

inline DevicePageTable upload_page_table(const PageTable& t, DeviceAllocations& mem) {
  DevicePageTable d;
  d.indptr = mem.upload(t.indptr, "cudaMalloc/cudaMemcpy of FlashInfer's page indptr");
  d.indices = mem.upload(t.indices, "cudaMalloc/cudaMemcpy of FlashInfer's page indices");
  d.last_page_len = mem.upload(t.last_page_len, "cudaMalloc/cudaMemcpy of FlashInfer's last page lengths");
  return d;
}

}  // namespace abfi

// Device memory: cudaMalloc'd buffers tracked by the backend (so a reset can forget them), stream-ordered
// copies and fills.
#pragma once
#include <cstddef>
#include <mutex>
#include <unordered_set>

namespace ab::cuda {

class AllocationTracker {
 public:
  // cudaMalloc (never managed memory); BackendError "cudaMalloc of N bytes failed: out of memory".
  void* alloc(std::size_t bytes);
  // Frees a live allocation; pointers from before forget_all() (a device reset) are ignored. Never throws.
  void free(void* p) noexcept;
  // After cudaDeviceReset every allocation is gone: stop tracking them without freeing.
  void forget_all() noexcept;
  std::size_t live_count() const;

 private:
  mutable std::mutex mu_;
  std::unordered_set<void*> live_;
};

// Copies and fills ordered on `stream` (a cudaStream_t). upload/download return when the copy is done.
void upload(void* dst, const void* src, std::size_t bytes, void* stream);
void download(void* dst, const void* src, std::size_t bytes, void* stream);
void fill(void* dst, unsigned char value, std::size_t bytes, void* stream);

}  // namespace ab::cuda

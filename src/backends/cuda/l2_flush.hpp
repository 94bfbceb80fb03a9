// L2 flush: a stream-ordered write over a buffer at least twice the L2 size, allocated once.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ab::cuda {

class L2Flusher {
 public:
  L2Flusher() = default;
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  // Allocates max(2 x l2_bytes, 8 MiB). Throws BackendError when out of memory.
  void init(std::int64_t l2_bytes);
  // Writes the whole buffer on `stream` (cudaStream_t); a memset, so no kernel appears in launch counts.
  void flush(void* stream);
  // Frees the buffer (forget: after a device reset, when it is already gone).
  void release(bool forget);
  std::size_t bytes() const { return bytes_; }

 private:
  void* buf_ = nullptr;
  std::size_t bytes_ = 0;
  unsigned char value_ = 0;
};

}  // namespace ab::cuda

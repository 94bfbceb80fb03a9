// The device-memory interface of a backend: allocation, copies to and from the host, fills (bytes, and the
// random inputs drawn in place), the stream
// barrier, and placement. Pointers handed to and returned by it live in backend memory (host for cpu,
// device for cuda); strategies only do arithmetic on them, never dereference them.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/dtype.hpp"
#include "core/input_stream.hpp"
#include "core/problem.hpp"

namespace ab {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // alloc throws BackendError when out of memory.
  virtual void* alloc(std::size_t bytes) = 0;
  virtual void free(void* p) = 0;
  virtual void upload(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void download(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void fill_bytes(void* dst, unsigned char value, std::size_t bytes) = 0;
  // Draws a tensor of the random inputs where it lives (core/input_stream.hpp; the placement's pointers in
  // this memory): the same bits on every backend, without a host copy.
  virtual void fill_random(void* dst, const RandomFill& fill) = 0;
  virtual void synchronize() = 0;

  // Bytes of this memory that preparing a problem's inputs takes beyond the buffers allocated through
  // alloc (the estimate made before allocating): 0 here; cpu, whose memory is host memory, counts the host
  // copies of the inputs and, with the reference, its fp64 result.
  virtual std::int64_t input_staging_bytes(const Problem& p, bool with_reference) const {
    (void)p;
    (void)with_reference;
    return 0;
  }

  // Before a measurement round (MeasureSettings::rounds > 1): give the measurement's own buffers (the L2
  // flush buffer) back and hold a spacer whose size depends on `salt`, so that the round's allocations land
  // at other device addresses than the last round's. A median moves with memory placement between
  // processes; rounds on fresh placements let one process see that spread. No-op where placement is moot.
  virtual void relocate_buffers(std::uint64_t salt) { (void)salt; }
  // The most a spacer of relocate_buffers holds (counted in the memory estimate of a run with rounds).
  static constexpr std::int64_t kMaxRelocationSpacerBytes = std::int64_t(128) << 20;
};

// RAII buffer in backend memory.
class Buffer {
 public:
  Buffer() = default;
  Buffer(DeviceMemory& m, std::size_t bytes) : m_(&m), p_(bytes ? m.alloc(bytes) : nullptr), bytes_(bytes) {}
  ~Buffer() { reset(); }
  Buffer(Buffer&& o) noexcept : m_(o.m_), p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; o.bytes_ = 0; }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) { reset(); m_ = o.m_; p_ = o.p_; bytes_ = o.bytes_; o.p_ = nullptr; o.bytes_ = 0; }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void reset() {
    if (p_ && m_) m_->free(p_);
    p_ = nullptr;
    bytes_ = 0;
  }
  // After the backend rebuilt its context (recover), the old allocation is gone: forget it without freeing.
  void forget() { p_ = nullptr; bytes_ = 0; }
  void* get() const { return p_; }
  template <class T> T* as() const { return static_cast<T*>(p_); }
  std::size_t bytes() const { return bytes_; }

 private:
  DeviceMemory* m_ = nullptr;
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Byte-offset pointer arithmetic on backend pointers.
inline const void* offset_ptr(const void* p, std::int64_t elements, DType t) {
  return static_cast<const char*>(p) + elements * static_cast<std::int64_t>(dtype_size(t));
}
inline void* offset_ptr(void* p, std::int64_t elements, DType t) {
  return static_cast<char*>(p) + elements * static_cast<std::int64_t>(dtype_size(t));
}

}  // namespace ab

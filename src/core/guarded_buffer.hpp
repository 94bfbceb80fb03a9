// Buffers in backend memory with poisoned guard regions before and after them, and the check that finds a
// write outside a buffer (an out-of-bounds write by a plugin's kernel) by looking at those regions.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/device_memory.hpp"

namespace ab {

// The byte every output buffer is filled with before a verified forward: NaN in every fp16, bf16 and fp32
// element, so that an element the forward did not write fails verification.
inline constexpr unsigned char kOutputPoison = 0xFF;

// One buffer of `bytes` usable bytes with kGuardBytes of a fixed pattern on each side.
class GuardedBuffer {
 public:
  static constexpr std::size_t kGuardBytes = 64 * 1024;
  static constexpr unsigned char kPattern = 0xA5;

  GuardedBuffer() = default;
  GuardedBuffer(DeviceMemory& m, std::size_t bytes, std::string name);
  void* get() const { return bytes_ ? static_cast<char*>(outer_.get()) + kGuardBytes : nullptr; }
  template <class T> T* as() const { return static_cast<T*>(get()); }
  std::size_t bytes() const { return bytes_; }
  const std::string& name() const { return name_; }
  // "" when both guard regions still hold the pattern, else what changed ("O: 12 bytes after its end").
  std::string check() const;
  // After the backend rebuilt its context: drop the allocation without freeing it.
  void forget() { outer_.forget(); bytes_ = 0; }

 private:
  DeviceMemory* m_ = nullptr;
  Buffer outer_;
  std::size_t bytes_ = 0;
  std::string name_;
};

// The guard regions of a set of buffers (a problem's tensors), checked together.
class GuardRegions {
 public:
  void add(const GuardedBuffer* b) { if (b && b->bytes()) bufs_.push_back(b); }
  // "" when no guard region changed, else the first change in words.
  std::string check() const;

 private:
  std::vector<const GuardedBuffer*> bufs_;
};

// Bytes a GuardedBuffer of any size takes beyond its own (for memory estimates).
inline constexpr std::int64_t kGuardOverheadBytes = 2 * static_cast<std::int64_t>(GuardedBuffer::kGuardBytes);

}  // namespace ab

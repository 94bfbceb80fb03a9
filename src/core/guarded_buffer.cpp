// GuardedBuffer: allocation with poisoned regions on both sides, and the check of those regions.
#include "core/guarded_buffer.hpp"

#include <fmt/format.h>

namespace ab {

GuardedBuffer::GuardedBuffer(DeviceMemory& m, std::size_t bytes, std::string name)
    : m_(&m), bytes_(bytes), name_(std::move(name)) {
  if (!bytes) return;
  outer_ = Buffer(m, bytes + 2 * kGuardBytes);
  m.fill_bytes(outer_.get(), kPattern, kGuardBytes);
  m.fill_bytes(static_cast<char*>(outer_.get()) + kGuardBytes + bytes, kPattern, kGuardBytes);
}

namespace {
// Bytes of `region` that differ from the pattern, and the offset of the first one (or -1).
std::size_t changed_bytes(const std::vector<unsigned char>& region, std::ptrdiff_t* first) {
  std::size_t n = 0;
  *first = -1;
  for (std::size_t i = 0; i < region.size(); ++i)
    if (region[i] != GuardedBuffer::kPattern) {
      if (*first < 0) *first = static_cast<std::ptrdiff_t>(i);
      ++n;
    }
  return n;
}
}  // namespace

std::string GuardedBuffer::check() const {
  if (!bytes_ || !outer_.get()) return "";
  std::vector<unsigned char> before(kGuardBytes), after(kGuardBytes);
  m_->synchronize();
  m_->download(before.data(), outer_.get(), kGuardBytes);
  m_->download(after.data(), static_cast<const char*>(outer_.get()) + kGuardBytes + bytes_, kGuardBytes);
  m_->synchronize();
  std::ptrdiff_t first = -1;
  if (std::size_t n = changed_bytes(before, &first))
    return fmt::format("out-of-bounds write: {} guard bytes before the start of {} changed (the first {} bytes before it)",
                       n, name_, kGuardBytes - static_cast<std::size_t>(first));
  if (std::size_t n = changed_bytes(after, &first))
    return fmt::format("out-of-bounds write: {} guard bytes after the end of {} changed (first at byte {} past it)", n,
                       name_, first);
  return "";
}

std::string GuardRegions::check() const {
  for (const GuardedBuffer* b : bufs_)
    if (std::string why = b->check(); !why.empty()) return why;
  return "";
}

}  // namespace ab

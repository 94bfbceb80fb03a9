// Sizes as text.
#include "core/sizes.hpp"

#include <fmt/format.h>

namespace ab {

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  int u = 0;
  while (b >= 1024 && u < 8) {
    b /= 1024;
    ++u;
  }
  return fmt::format("{:.2f} {}", b, units[u]);
}

std::string human_bytes_saturating(std::int64_t bytes) {
  if (bytes == kSizeSaturated) return "more than 8 EiB";
  return human_bytes(static_cast<double>(bytes));
}

}  // namespace ab

// UTC timestamps, ISO 8601 to the second.
#include "core/utc_timestamp.hpp"

namespace ab {

std::string utc_timestamp(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace ab

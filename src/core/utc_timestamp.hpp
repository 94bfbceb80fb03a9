// The one UTC timestamp format of reports ("created") and cache entries ("tuned_at").
#pragma once
#include <ctime>
#include <string>

namespace ab {

// "2026-11-21T22:10:00Z": the time `t` (default: now) in UTC, ISO 8601 to the second.
std::string utc_timestamp(std::time_t t = std::time(nullptr));

}  // namespace ab

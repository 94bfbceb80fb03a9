// Memory estimates before allocation.
#include "run/memory_estimate.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/sizes.hpp"
#include "run/problem_inputs.hpp"

namespace ab {

std::int64_t memory_limit(const DeviceInfo& dev, std::int64_t max_memory) {
  return max_memory > 0 ? max_memory : (dev.memory_free > 0 ? dev.memory_free : dev.memory_bytes);
}

std::int64_t input_bytes(const Backend& be, const Problem& p, bool verify) {
  return size_add(ProblemInputs::device_bytes(p, verify), be.memory().input_staging_bytes(p, verify));
}

void check_memory_or_throw(const Backend& be, const std::vector<Problem>& problems, bool verify, std::int64_t limit) {
  if (limit <= 0) return;
  for (const Problem& p : problems) {
    std::int64_t need = input_bytes(be, p, verify);
    if (need > limit)
      throw UsageError(fmt::format("problem {} needs {} for its tensors alone, more than the {} available; refused before allocating",
                                   p.label(), human_bytes_saturating(need), human_bytes_saturating(limit)));
  }
}

std::string workspace_refusal(std::int64_t used, std::int64_t ws, std::int64_t limit) {
  if (size_add(used, ws) <= limit) return "";
  return fmt::format("needs {} of workspace; {} of {} left after the inputs", human_bytes_saturating(ws),
                     human_bytes_saturating(limit > used ? limit - used : 0), human_bytes_saturating(limit));
}

}  // namespace ab

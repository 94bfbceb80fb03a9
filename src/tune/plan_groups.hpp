// A strategy's GEMM plans grouped by shape: the tuner searches each distinct shape once and sets the
// chosen algorithm on every plan of that shape.
#pragma once
#include <string>
#include <vector>

#include "core/backend.hpp"

namespace ab {

struct PlanGroup {
  std::string key;  // GemmShape::key()
  GemmShape shape;
  std::vector<GemmPlanId> ids;
};

// The plans grouped by shape key, groups in the order their first plan appears.
std::vector<PlanGroup> group_plans(Backend& be, const std::vector<GemmPlanId>& ids);

// Sets `a` (with `source`: "tuned", "cache", "heuristic") on every plan of the group.
void set_group(Backend& be, const PlanGroup& g, const GemmAlgo& a, const std::string& source);

}  // namespace ab

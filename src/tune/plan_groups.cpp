// A strategy's GEMM plans grouped by shape, and setting one algorithm on a whole group.
#include "tune/plan_groups.hpp"

namespace ab {

std::vector<PlanGroup> group_plans(Backend& be, const std::vector<GemmPlanId>& ids) {
  std::vector<PlanGroup> groups;
  for (GemmPlanId id : ids) {
    GemmShape shape = be.gemm().plan_shape(id);
    std::string key = shape.key();
    PlanGroup* g = nullptr;
    for (auto& x : groups)
      if (x.key == key) g = &x;
    if (!g) {
      groups.push_back({key, shape, {}});
      g = &groups.back();
    }
    g->ids.push_back(id);
  }
  return groups;
}

void set_group(Backend& be, const PlanGroup& g, const GemmAlgo& a, const std::string& source) {
  for (GemmPlanId id : g.ids) be.gemm().set_algo(id, a, source);
}

}  // namespace ab

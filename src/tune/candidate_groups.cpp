// Grouping an exhaustive list per base cuBLASLt configuration (see the header).
#include "tune/candidate_groups.hpp"

#include <unordered_map>

namespace ab {

const char* const kVariantAttributes[3] = {"CTA_SWIZZLING", "CUSTOM_OPTION", "CLUSTER_SHAPE_ID"};

namespace {

bool is_variant_attribute(const std::string& name) {
  for (const char* v : kVariantAttributes)
    if (name == v) return true;
  return false;
}

}  // namespace

std::string candidate_group_key(const GemmAlgo& a) {
  if (!a.attrs.is_object() || !a.attrs.contains("ALGO_ID")) return "";
  // "NAME=VALUE;" of every other attribute, in the object's (sorted) key order: no copy of the attributes, as
  // this runs once per candidate of a 10^5-candidate list.
  std::string key;
  for (auto it = a.attrs.begin(); it != a.attrs.end(); ++it) {
    if (is_variant_attribute(it.key())) continue;
    key += it.key();
    key += '=';
    key += it.value().dump();
    key += ';';
  }
  return key;
}

int variant_changes(const GemmAlgo& a) {
  if (!a.attrs.is_object()) return 0;
  int n = 0;
  for (const char* name : kVariantAttributes) {
    auto it = a.attrs.find(name);
    n += it != a.attrs.end() && it->is_number() && it->get<double>() != 0;
  }
  return n;
}

std::vector<CandidateGroup> group_candidates(const std::vector<GemmAlgo>& algos, std::size_t lo, std::size_t hi) {
  std::vector<CandidateGroup> groups;
  std::vector<int> fewest;  // per group: its representative's variant changes
  std::unordered_map<std::string, std::size_t> by_key;
  for (std::size_t i = lo; i < hi && i < algos.size(); ++i) {
    const std::string key = candidate_group_key(algos[i]);
    const int changes = variant_changes(algos[i]);
    auto found = key.empty() ? by_key.end() : by_key.find(key);
    if (found == by_key.end()) {
      if (!key.empty()) by_key.emplace(key, groups.size());
      groups.push_back({{i}, i});
      fewest.push_back(changes);
      continue;
    }
    CandidateGroup& g = groups[found->second];
    g.members.push_back(i);
    if (changes < fewest[found->second]) {
      g.representative = i;
      fewest[found->second] = changes;
    }
  }
  return groups;
}

bool any_variants(const std::vector<CandidateGroup>& groups) {
  for (const CandidateGroup& g : groups)
    if (g.members.size() > 1) return true;
  return false;
}

std::vector<bool> groups_within_margin(const std::vector<double>& group_ms, double best_ms, double margin) {
  std::vector<bool> keep(group_ms.size(), true);
  if (!(best_ms > 0)) return keep;
  for (std::size_t g = 0; g < group_ms.size(); ++g)
    keep[g] = !(group_ms[g] > 0) || group_ms[g] <= margin * best_ms;
  return keep;
}

}  // namespace ab

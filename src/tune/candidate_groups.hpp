// The grouped probe's groups (docs/tuning.md, step 2): an exhaustive list's candidates grouped per base cuBLASLt
// configuration (every attribute but the variant settings CTA swizzle, custom option and cluster shape, so one
// algorithm, tile, stages, split-K and reduction scheme), each group with a representative probed first, and
// which groups go on. Pure: no device (tests/cpu/test_group_probe.cpp).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/backend.hpp"

namespace ab {

// The attributes that make a candidate a variant of its base; cuBLASLt's default of each is 0 (no swizzle,
// custom option 0, CUBLASLT_CLUSTER_SHAPE_AUTO).
extern const char* const kVariantAttributes[3];

// The key that candidates of one group share: their attributes less the variant settings. "" for a candidate
// whose attributes name no ALGO_ID (not a cuBLASLt configuration): it is a group of its own.
std::string candidate_group_key(const GemmAlgo& a);

// How many variant settings of `a` differ from their defaults (0 for a base).
int variant_changes(const GemmAlgo& a);

struct CandidateGroup {
  std::vector<std::size_t> members;  // indices into the list, in list order
  std::size_t representative = 0;    // the member with the fewest variant settings changed (the first of those)
};

// Candidates [lo, hi) of `algos` grouped, the groups in the order of their first member.
std::vector<CandidateGroup> group_candidates(const std::vector<GemmAlgo>& algos, std::size_t lo, std::size_t hi);

// Whether grouping can save a probe: some group has more than one member.
bool any_variants(const std::vector<CandidateGroup>& groups);

// Which groups go on to have every member probed, given each group's fastest probe among the members probed
// first (`group_ms`, 0 or less when none of them could be probed) and the fastest probe of a verified candidate
// (`best_ms`, 0 for none): those within `margin` times best_ms (group_ms <= margin x best_ms), and every group
// without a time, or all of them without a best.
std::vector<bool> groups_within_margin(const std::vector<double>& group_ms, double best_ms, double margin);

}  // namespace ab

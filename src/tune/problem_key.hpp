// The canonical text and JSON a heuristic-cache fused entry is keyed by: the full attention problem.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/problem.hpp"

namespace ab {

// "B32_H12_S512_D64_P1_ps512_contiguous_fp16_full" (causal problems end in "_causal"). Every field of
// Problem::operator== is in it, so two problems share a key exactly when they are equal.
std::string problem_cache_key(const Problem& p);
// The problem as the cache shows it (the report's problem fields).
nlohmann::json problem_cache_json(const Problem& p);

}  // namespace ab

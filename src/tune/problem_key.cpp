// Problem → cache key text and JSON, both from the axis table (core/problem_axes.hpp).
#include "tune/problem_key.hpp"

#include "core/problem_axes.hpp"

namespace ab {

std::string problem_cache_key(const Problem& p) { return problem_cache_key_of_json(problem_to_json(p)); }

nlohmann::json problem_cache_json(const Problem& p) {
  nlohmann::json j = problem_to_json(p);
  j.erase("pages_requested");  // the cache keys the problem itself, not how its page count was spelled
  return j;
}

}  // namespace ab

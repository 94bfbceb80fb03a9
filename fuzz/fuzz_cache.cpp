// libFuzzer target: the heuristic-cache reader (bounded JSON, schema, strict entries) and a round trip of
// what it accepted (to_json, dump, read again: the same entries). Any exception other than UsageError,
// any sanitizer report, or a round trip that changes the cache is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/errors.hpp"
#include "core/json_file.hpp"
#include "tune/heuristic_cache.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  ab::HeuristicCache cache;
  try {
    cache = ab::HeuristicCache::from_json(ab::parse_json_text(text, "fuzz"), "fuzz");
  } catch (const ab::UsageError&) {
    return 0;
  }
  nlohmann::json out = cache.to_json();
  ab::HeuristicCache again = ab::HeuristicCache::from_json(ab::parse_json_text(out.dump(), "again"), "again");
  if (again.to_json() != out) std::abort();
  return 0;
}

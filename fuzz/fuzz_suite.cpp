// libFuzzer target: suite configs (attnbench.suite JSON) through the bounded JSON reader and the suite
// parser. Any exception other than UsageError, and any sanitizer report, is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.hpp"
#include "core/grid.hpp"
#include "core/json_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    nlohmann::json j = ab::parse_json_text(text, "fuzz");
    ab::suite_from_json(j, "fuzz");
  } catch (const ab::UsageError&) {
  }
  return 0;
}

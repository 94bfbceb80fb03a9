// libFuzzer target: `attnbench merge`'s inputs. The input is up to four JSON documents separated by lines of
// "----"; each goes through the bounded reader, and reports are merged (the shard headers, grid fingerprints
// and row placement checked) or caches merged (both conflict rules). Any exception other than UsageError, or
// any sanitizer report, is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "orchestrate/merge.hpp"
#include "core/errors.hpp"
#include "core/json_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<ab::MergeInput> inputs;
  std::size_t at = 0;
  while (at <= text.size() && inputs.size() < 4) {
    std::size_t cut = text.find("\n----\n", at);
    std::string doc = text.substr(at, cut == std::string::npos ? std::string::npos : cut - at);
    try {
      inputs.push_back({"in" + std::to_string(inputs.size()), ab::parse_json_text(doc, "fuzz")});
    } catch (const ab::UsageError&) {
      return 0;
    }
    if (cut == std::string::npos) break;
    at = cut + 6;
  }
  if (inputs.empty()) return 0;
  std::vector<std::string> notes;
  try {
    (void)ab::merge_reports(inputs, "attnbench merge fuzz", &notes);
  } catch (const ab::UsageError&) {
  }
  for (bool fastest : {false, true}) {
    try {
      (void)ab::merge_caches(inputs, fastest, &notes);
    } catch (const ab::UsageError&) {
    }
  }
  return 0;
}

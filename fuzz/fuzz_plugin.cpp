// libFuzzer target: the parent's parser of a plugin loader's answer (plugin_info_from_description: bounded
// JSON, the description's fields, the plugin rules, the loader's refusal). Any exception other than
// UsageError, a refusal that is not one line of at most a few hundred bytes, an accepted description that
// breaks the rules or does not survive a round trip, or any sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/errors.hpp"
#include "strategies/plugin_description.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string path = "fuzz.so";
  ab::PluginInfo info;
  try {
    info = ab::plugin_info_from_description(text, path);
  } catch (const ab::UsageError& e) {
    const std::string_view what = e.what();
    if (what.find('\n') != std::string_view::npos || what.find('\r') != std::string_view::npos || what.size() > 1024)
      std::abort();
    return 0;
  }
  ab::check_plugin_info(info, path);  // throws (a finding) if the parser let a broken description through
  ab::PluginInfo again = ab::plugin_info_from_description(ab::plugin_description_json(info), path);
  if (again.name != info.name || again.version != info.version || again.description != info.description ||
      again.configs != info.configs || again.path != path)
    std::abort();
  return 0;
}

// --plugin and a suite's "plugins": the paths, and loading them (and --peers' peers) here or in loader processes.
#include "cli/plugin_flags.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/peer_flags.hpp"
#include "orchestrate/plugin_loader.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"
#include "core/json_file.hpp"
#include "strategies/plugin_library.hpp"

namespace ab {

namespace {

// A suite's "plugins": a list of paths, each relative to the suite file unless absolute.
std::vector<std::string> suite_plugins(const std::string& config) {
  const std::string path = resolve_suite_path(config);
  nlohmann::json j = read_json_file(path);
  std::vector<std::string> out;
  if (!j.is_object() || !j.contains("plugins")) return out;
  const auto& list = j["plugins"];
  if (!list.is_array()) throw UsageError(fmt::format("config '{}': 'plugins' must be a list of paths", path));
  for (const auto& e : list) {
    if (!e.is_string() || e.get<std::string>().empty())
      throw UsageError(fmt::format("config '{}': 'plugins' must be a list of paths", path));
    std::filesystem::path p = e.get<std::string>();
    if (p.is_relative()) p = std::filesystem::path(path).parent_path() / p;
    out.push_back(p.lexically_normal().string());
  }
  return out;
}

}  // namespace

std::vector<std::string> plugin_paths(const SharedFlags& f) {
  std::vector<std::string> paths = f.plugins;
  if (!f.config.empty())
    for (const std::string& suite : suite_names(f.config))
      for (std::string& p : suite_plugins(suite)) paths.push_back(std::move(p));
  return paths;
}

void load_flag_plugins(const SharedFlags& f, PluginCode where) {
  const std::vector<std::string> paths = plugin_paths(f);
  if (where == PluginCode::here) load_plugins(paths);
  else load_plugins_in_children(paths, plugin_load_timeout(f.plugin_timeout));
  load_flag_peers(f, where == PluginCode::here);  // after the plugins: plugin rows first, then peer rows
}

}  // namespace ab

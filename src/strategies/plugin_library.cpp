// Loading plugins: dlopen, the entry symbol, the ABI version and the table checked before anything runs.
#include "strategies/plugin_library.hpp"

#include <dlfcn.h>

#include <filesystem>

#include <fmt/format.h>

#include "attnbench/plugin.h"
#include "core/errors.hpp"

namespace ab {

namespace {

std::vector<LoadedPlugin>& registry() {
  static std::vector<LoadedPlugin> plugins;
  return plugins;
}

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

// The table's fields, checked; throws UsageError naming `path`.
PluginInfo read_table(const ab_plugin* t, const std::string& path) {
  auto bad = [&](const std::string& why) { return UsageError(fmt::format("--plugin={}: {}", path, why)); };
  if (!t) throw bad("attnbench_plugin() returned NULL");
  if (t->abi_version != ATTNBENCH_PLUGIN_ABI_VERSION)
    throw bad(fmt::format("built for plugin ABI version {}, this attnbench takes version {} (rebuild it against "
                          "include/attnbench/plugin.h)", t->abi_version, ATTNBENCH_PLUGIN_ABI_VERSION));
  if (t->struct_size < sizeof(ab_plugin)) throw bad(fmt::format("its table is {} bytes, expected {}", t->struct_size, sizeof(ab_plugin)));
  if (!t->name || !valid_name(t->name)) throw bad("its name must be 1-64 characters of [A-Za-z0-9_.-]");
  if (t->num_configs < 1 || t->num_configs > 4096 || !t->configs)
    throw bad("it must list between 1 and 4096 configurations");
  if (!t->can_implement || !t->kernels_per_forward || !t->setup || !t->forward || !t->teardown)
    throw bad("a function of its table is NULL");
  PluginInfo info;
  info.name = t->name;
  info.version = t->version ? t->version : "";
  info.description = t->description ? t->description : "";
  info.path = path;
  for (int i = 0; i < t->num_configs; ++i) {
    if (!t->configs[i] || !*t->configs[i]) throw bad(fmt::format("configuration {} has no name", i));
    info.configs.emplace_back(t->configs[i]);
  }
  return info;
}

}  // namespace

void load_plugins(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    bool seen = false;
    for (const LoadedPlugin& p : registry()) seen = seen || p.info.path == path;
    if (seen) continue;
    if (!std::filesystem::exists(path)) throw UsageError(fmt::format("--plugin={}: no such file", path));
    // A path without a slash would make dlopen search the library path instead of this file.
    std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
    void* handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw UsageError(fmt::format("--plugin={}: cannot load it: {}", path, dlerror()));
    auto entry = reinterpret_cast<ab_plugin_entry_fn>(dlsym(handle, ATTNBENCH_PLUGIN_ENTRY));
    if (!entry) throw UsageError(fmt::format("--plugin={}: it does not export {}()", path, ATTNBENCH_PLUGIN_ENTRY));
    const ab_plugin* table = entry();
    PluginInfo info = read_table(table, path);
    for (const LoadedPlugin& p : registry())
      if (p.info.name == info.name)
        throw UsageError(fmt::format("--plugin={}: a plugin named '{}' is already loaded from {}", path, info.name, p.info.path));
    registry().push_back({std::move(info), table});
  }
}

const std::vector<LoadedPlugin>& loaded_plugins() { return registry(); }

std::vector<PluginInfo> describe_plugins() {
  std::vector<PluginInfo> v;
  for (const LoadedPlugin& p : registry()) v.push_back(p.info);
  return v;
}

}  // namespace ab

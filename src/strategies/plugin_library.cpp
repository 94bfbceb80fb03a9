// Loading a plugin's library into this process: dlopen, the entry symbol, the ABI version, and the table
// read with bounds before anything trusts it; and the process's list of plugins.
#include "strategies/plugin_library.hpp"

#include <dlfcn.h>

#include <cstddef>
#include <cstring>
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

// The string at `s` (null: empty), read no further than `max` + 1 bytes; UsageError when it is longer.
// A pointer to nowhere crashes this process: a loader process (orchestrate/plugin_loader.hpp), whose parent says so.
std::string bounded_string(const char* s, std::size_t max, const std::string& what, const std::string& path) {
  if (!s) return "";
  const std::size_t n = strnlen(s, max + 1);
  if (n > max) throw UsageError(plugin_error(path, fmt::format("its {} is longer than {} bytes", what, max)));
  return std::string(s, n);
}

// The table's qo_layout where its struct_size covers the field (plugin.h), else head-major.
template <class Bad>
QoLayout read_qo_layout(const ab_plugin* t, const Bad& bad) {
  if (t->struct_size < offsetof(ab_plugin, qo_layout) + sizeof t->qo_layout) return QoLayout::head_major;
  if (t->qo_layout == AB_QO_HEAD_MAJOR) return QoLayout::head_major;
  if (t->qo_layout == AB_QO_TOKEN_MAJOR) return QoLayout::token_major;
  throw bad(fmt::format("its qo_layout {} is neither AB_QO_HEAD_MAJOR (0) nor AB_QO_TOKEN_MAJOR (1)", t->qo_layout));
}

// The table's variant bits where its struct_size covers the field (plugin.h), else none.
template <class Bad>
std::vector<std::string> read_variants(const ab_plugin* t, const Bad& bad) {
  std::vector<std::string> names;
  if (t->struct_size < offsetof(ab_plugin, variants) + sizeof t->variants) return names;
  std::uint32_t unknown = 0;
  if (!variant_names_of_bits(t->variants, &names, &unknown))
    throw bad(fmt::format("its variants 0x{:x} hold bits no ab_variant has (0x{:x})", t->variants, unknown));
  return names;
}

// The table's fields, read with bounds and checked; throws UsageError naming `path`.
PluginInfo read_table(const ab_plugin* t, const std::string& path) {
  auto bad = [&](const std::string& why) { return UsageError(plugin_error(path, why)); };
  if (!t) throw bad("attnbench_plugin() returned NULL");
  if (t->abi_version != ATTNBENCH_PLUGIN_ABI_VERSION)
    throw bad(fmt::format("built for plugin ABI version {}, this attnbench takes version {} (rebuild it against "
                          "include/attnbench/plugin.h)", t->abi_version, ATTNBENCH_PLUGIN_ABI_VERSION));
  if (t->struct_size < ATTNBENCH_PLUGIN_TABLE_MIN_SIZE)
    throw bad(fmt::format("its table is {} bytes, expected at least {}", t->struct_size, ATTNBENCH_PLUGIN_TABLE_MIN_SIZE));
  if (!t->name) throw bad("its name is NULL");
  if (t->num_configs < 1 || t->num_configs > kMaxPluginConfigs || !t->configs)
    throw bad(fmt::format("it must list between 1 and {} configurations (it says {})", kMaxPluginConfigs, t->num_configs));
  if (!t->can_implement || !t->kernels_per_forward || !t->setup || !t->forward || !t->teardown)
    throw bad("a function of its table is NULL");
  PluginInfo info;
  info.name = bounded_string(t->name, kMaxPluginName, "name", path);
  info.version = bounded_string(t->version, kMaxPluginVersion, "version", path);
  info.description = bounded_string(t->description, kMaxPluginDescription, "description", path);
  info.path = path;
  info.qo_layout = read_qo_layout(t, bad);
  info.variants = read_variants(t, bad);
  for (int i = 0; i < t->num_configs; ++i) {
    if (!t->configs[i]) throw bad(fmt::format("configuration {} has no name", i));
    info.configs.push_back(bounded_string(t->configs[i], kMaxPluginConfigName, fmt::format("configuration {}", i), path));
  }
  check_plugin_info(info, path);
  return info;
}

}  // namespace

LoadedPlugin open_plugin_library(const std::string& path) {
  std::error_code ec;  // a name too long for the file system is "no such file", not an exception
  if (!std::filesystem::exists(path, ec)) throw UsageError(plugin_error(path, "no such file"));
  // A path without a slash would make dlopen search the library path instead of this file.
  std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw UsageError(plugin_error(path, fmt::format("cannot load it: {}", why ? why : "dlopen failed")));
  }
  auto entry = reinterpret_cast<ab_plugin_entry_fn>(dlsym(handle, ATTNBENCH_PLUGIN_ENTRY));
  if (!entry) throw UsageError(plugin_error(path, fmt::format("it does not export {}()", ATTNBENCH_PLUGIN_ENTRY)));
  const ab_plugin* table = entry();
  return {read_table(table, path), table};
}

void load_plugins(const std::vector<std::string>& paths) {
  for (const std::string& path : paths)
    if (!plugin_loaded_from(path)) add_loaded_plugin(open_plugin_library(path));
}

bool plugin_loaded_from(const std::string& path, PluginKind kind) {
  for (const LoadedPlugin& p : registry())
    if (p.info.path == path && p.info.kind == kind) return true;
  return false;
}

void add_loaded_plugin(LoadedPlugin plugin) {
  for (const LoadedPlugin& p : registry())
    if (p.info.strategy_name() == plugin.info.strategy_name())
      throw UsageError(plugin_error(plugin.info.path, fmt::format("a {} named '{}' is already loaded from {}",
                                                                 plugin.info.kind == PluginKind::peer ? "peer" : "plugin",
                                                                 plugin.info.name, p.info.path)));
  registry().push_back(std::move(plugin));
}

const std::vector<LoadedPlugin>& loaded_plugins() { return registry(); }

std::vector<PluginInfo> describe_plugins() {
  std::vector<PluginInfo> v;
  for (const LoadedPlugin& p : registry()) v.push_back(p.info);
  return v;
}

}  // namespace ab

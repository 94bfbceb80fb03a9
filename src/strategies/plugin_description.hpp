// A plugin's description: what attnbench knows of a plugin outside the process that loaded it (its name,
// version, description and configurations), the rules every such description obeys, and its JSON form, which
// a loader process (orchestrate/plugin_loader.hpp) prints for the parent. The parent parses it as untrusted input.
#pragma once
#include <cstdint>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "strategies/plugin_kind.hpp"

namespace ab {

// The order of a plugin's Q and O (plugin.h, enum ab_qo_layout): attnbench's [B, H, q_len, D], or token-major
// [B * q_len, H, D], which attnbench permutes to and from outside the timed forwards.
enum class QoLayout { head_major, token_major };
// "head-major" / "token-major", as descriptions and `list` write it.
const char* qo_layout_name(QoLayout l);
// The variant names of plugin.h's ab_variant bits (kSlidingWindow, kSoftCapping, kSinks), in that order; false
// (with *bad the unknown bits) when `bits` holds a bit no variant has.
bool variant_names_of_bits(std::uint32_t bits, std::vector<std::string>* names, std::uint32_t* bad);

// What `attnbench list` shows about a loaded plugin.
struct PluginInfo {
  std::string name;         // the plugin's own name; the strategy is strategy_name()
  std::string version;      // the plugin's version text (a peer's "unavailable: WHY" when it cannot run here)
  std::string description;
  std::string path;         // as given to --plugin (or a suite), or where a peer was found
  std::vector<std::string> configs;  // its tunable configurations, the default first
  QoLayout qo_layout = QoLayout::head_major;  // the table's qo_layout (head-major when its table predates it)
  std::vector<std::string> variants;          // the problem variants it runs (Problem::variants' names; none when
                                              // its table predates the field)
  PluginKind kind = PluginKind::plugin;  // set by whoever loaded it (the table does not say)
  std::string strategy_name() const { return strategy_prefix(kind) + name; }
};

// The bounds of a plugin's table (plugin.h): the name is 1-64 characters of [A-Za-z0-9_.-]; the version,
// description and each configuration name are one line of text of at most these many bytes.
inline constexpr std::size_t kMaxPluginName = 64;
inline constexpr std::size_t kMaxPluginVersion = 256;
inline constexpr std::size_t kMaxPluginDescription = 1024;
inline constexpr std::size_t kMaxPluginConfigName = 256;
inline constexpr int kMaxPluginConfigs = 4096;
// The most bytes a description's JSON can take (every field at its bound, every byte escaped as \u00XX).
inline constexpr std::size_t kMaxPluginDescriptionJson = std::size_t(8) << 20;

// "--plugin=PATH: " + why, the one way a plugin's refusal begins.
std::string plugin_error(const std::string& path, const std::string& why);
// Checks `info` against the rules above; throws UsageError naming `path` with a short escaped excerpt of
// the offending text.
void check_plugin_info(const PluginInfo& info, const std::string& path);

// The loader process's answer: the description of a plugin it loaded, or why it could not load it.
std::string plugin_description_json(const PluginInfo& info);
std::string plugin_refusal_json(const std::string& message);
// Parses a loader's answer for the plugin at `path` (which fills info.path): its description, checked; or
// throws UsageError (one line, at most a few hundred bytes) with the loader's refusal or what is wrong with
// the text. Any bytes may come in.
PluginInfo plugin_info_from_description(std::string_view text, const std::string& path);

}  // namespace ab

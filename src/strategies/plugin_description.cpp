// A plugin's description (strategies/plugin_description.hpp): its rules, and its JSON form written by the
// loader process and parsed, as untrusted text, by the parent.
#include "strategies/plugin_description.hpp"

#include <algorithm>
#include <cctype>
#include <utility>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <attnbench/plugin.h>

#include "core/errors.hpp"
#include "core/problem.hpp"
#include "core/json_file.hpp"
#include "core/text_excerpt.hpp"

namespace ab {

namespace {

// The ABI's variant bits (plugin.h, enum ab_variant) and the names Problem::variants gives them: one table for the
// table's bits and a loader's description's names.
const std::pair<std::uint32_t, const char*> kVariantBits[] = {{AB_VARIANT_SLIDING_WINDOW, kSlidingWindow},
                                                              {AB_VARIANT_SOFT_CAPPING, kSoftCapping},
                                                              {AB_VARIANT_SINKS, kSinks},
                                                              {AB_VARIANT_HEAD_DIM_V, kValueHeadDim}};

using json = nlohmann::json;

constexpr const char* kSchema = "attnbench.plugin_description/1";
// The most bytes of a loader's refusal a message quotes.
constexpr std::size_t kMaxRefusalBytes = 400;

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > kMaxPluginName) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

// Checks one free-text field: one line of at most `max` bytes.
void check_text(const std::string& text, std::size_t max, const std::string& what, const std::string& path) {
  if (text.size() > max || !is_one_line_text(text))
    throw UsageError(plugin_error(path, fmt::format("its {} {} must be one line of text of at most {} bytes", what,
                                                    quoted_excerpt(text), max)));
}

// The string field `key` of the object `o`, or UsageError naming it.
std::string string_field(const json& o, const char* key, const std::string& path) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_string())
    throw UsageError(plugin_error(path, fmt::format("its loader's description has no string '{}'", key)));
  return it->get<std::string>();
}

PluginInfo info_from_json(const json& p, const std::string& path) {
  if (!p.is_object()) throw UsageError(plugin_error(path, "its loader's description is not an object"));
  PluginInfo info;
  info.name = string_field(p, "name", path);
  info.version = string_field(p, "version", path);
  info.description = string_field(p, "description", path);
  info.path = path;
  auto configs = p.find("configs");
  if (configs == p.end() || !configs->is_array())
    throw UsageError(plugin_error(path, "its loader's description has no list 'configs'"));
  if (configs->size() > static_cast<std::size_t>(kMaxPluginConfigs))
    throw UsageError(plugin_error(path, fmt::format("it must list between 1 and {} configurations (it lists {})",
                                                    kMaxPluginConfigs, configs->size())));
  for (const json& c : *configs) {
    if (!c.is_string()) throw UsageError(plugin_error(path, "its loader's description has a configuration that is not a string"));
    info.configs.push_back(c.get<std::string>());
  }
  // Optional: a loader of an attnbench that predates it writes none (head-major).
  if (auto layout = p.find("qo_layout"); layout != p.end()) {
    if (*layout == qo_layout_name(QoLayout::token_major)) info.qo_layout = QoLayout::token_major;
    else if (*layout != qo_layout_name(QoLayout::head_major))
      throw UsageError(plugin_error(path, "its loader's description has an unknown 'qo_layout'"));
  }
  // Optional as well (none): the variant names, each one Problem::variants knows, once.
  if (auto variants = p.find("variants"); variants != p.end()) {
    std::vector<std::string> known;
    for (const auto& [bit, name] : kVariantBits) known.push_back(name);
    if (!variants->is_array() || variants->size() > known.size())
      throw UsageError(plugin_error(path, "its loader's description's 'variants' is not a list of variant names"));
    for (const json& v : *variants) {
      if (!v.is_string() || std::find(known.begin(), known.end(), v.get<std::string>()) == known.end() ||
          std::find(info.variants.begin(), info.variants.end(), v.get<std::string>()) != info.variants.end())
        throw UsageError(plugin_error(path, "its loader's description names an unknown or repeated variant"));
      info.variants.push_back(v.get<std::string>());
    }
  }
  check_plugin_info(info, path);
  return info;
}

}  // namespace

const char* qo_layout_name(QoLayout l) { return l == QoLayout::token_major ? "token-major" : "head-major"; }

bool variant_names_of_bits(std::uint32_t bits, std::vector<std::string>* names, std::uint32_t* bad) {
  names->clear();
  for (const auto& [bit, name] : kVariantBits)
    if (bits & bit) {
      names->push_back(name);
      bits &= ~bit;
    }
  *bad = bits;
  return bits == 0;
}

std::string plugin_error(const std::string& path, const std::string& why) { return fmt::format("--plugin={}: {}", path, why); }

void check_plugin_info(const PluginInfo& info, const std::string& path) {
  if (!valid_name(info.name))
    throw UsageError(plugin_error(path, fmt::format("its name {} must be 1-{} characters of [A-Za-z0-9_.-]",
                                                    quoted_excerpt(info.name), kMaxPluginName)));
  check_text(info.version, kMaxPluginVersion, "version", path);
  check_text(info.description, kMaxPluginDescription, "description", path);
  if (info.configs.empty() || info.configs.size() > static_cast<std::size_t>(kMaxPluginConfigs))
    throw UsageError(plugin_error(path, fmt::format("it must list between 1 and {} configurations (it lists {})",
                                                    kMaxPluginConfigs, info.configs.size())));
  std::set<std::string> seen;
  for (std::size_t i = 0; i < info.configs.size(); ++i) {
    const std::string& c = info.configs[i];
    if (c.empty()) throw UsageError(plugin_error(path, fmt::format("configuration {} has no name", i)));
    check_text(c, kMaxPluginConfigName, fmt::format("configuration {}", i), path);
    if (!seen.insert(c).second)
      throw UsageError(plugin_error(path, fmt::format("configuration {} {} is listed twice", i, quoted_excerpt(c))));
  }
}

std::string plugin_description_json(const PluginInfo& info) {
  json p = {{"name", info.name},       {"version", info.version},
            {"description", info.description}, {"configs", info.configs},
            {"qo_layout", qo_layout_name(info.qo_layout)}, {"variants", info.variants}};
  return json{{"schema", kSchema}, {"plugin", p}}.dump() + "\n";
}

std::string plugin_refusal_json(const std::string& message) {
  // The message may quote the user's path, which need not be UTF-8: replace what is not.
  return json{{"schema", kSchema}, {"refused", message}}.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

PluginInfo plugin_info_from_description(std::string_view text, const std::string& path) {
  if (text.size() > kMaxPluginDescriptionJson)
    throw UsageError(plugin_error(path, fmt::format("its loader's description is larger than {} bytes", kMaxPluginDescriptionJson)));
  json doc;
  try {
    doc = parse_json_text(std::string(text), "its loader's description");
  } catch (const UsageError& e) {
    throw UsageError(plugin_error(path, escaped_text(e.what(), kMaxRefusalBytes)));
  }
  if (!doc.is_object() || doc.find("schema") == doc.end() || doc["schema"] != kSchema)
    throw UsageError(plugin_error(path, fmt::format("its loader's answer is not a {} document", kSchema)));
  const bool has_plugin = doc.contains("plugin"), has_refusal = doc.contains("refused");
  if (has_plugin == has_refusal)
    throw UsageError(plugin_error(path, "its loader's answer must hold exactly one of 'plugin' and 'refused'"));
  if (has_plugin) return info_from_json(doc["plugin"], path);
  if (!doc["refused"].is_string()) throw UsageError(plugin_error(path, "its loader's refusal is not a string"));
  // The loader names the plugin as the parent does; the parent's own prefix is put back, the rest escaped.
  std::string why = doc["refused"].get<std::string>();
  const std::string prefix = plugin_error(path, "");
  if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
  if (why.empty()) why = "its loader refused it without a reason";
  throw UsageError(plugin_error(path, escaped_text(why, kMaxRefusalBytes)));
}

}  // namespace ab
